#!/usr/bin/env python3
"""Writes examples/data/ from the golden flagship cases (standard library only).

For each small flagship workload NAME (l1_35_small, ...):
  NAME_x.npy            the input x, as PyTorch drew it (torch.rand)
  NAME.safetensors      the parameters, by their .kg names
  NAME_expected.npy     PyTorch's float64 answer
so that `kiln run examples/NAME.kg --input x=... --params ...` can be tried
and checked by hand. Rerun after regenerating tests/data/golden/.
"""
import json
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden"
OUT = ROOT / "examples" / "data"
NPY_DESCR = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "BOOL": "|b1"}


def read_safetensors(path):
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    data = raw[8 + n :]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = (entry["dtype"], entry["shape"], data[begin:end])
    return tensors


def write_npy(path, dtype, shape, payload):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        NPY_DESCR[dtype], dims)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header))
                     + header.encode("latin1") + payload)


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        dtype, shape, payload = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(payload)]}
        offset += len(payload)
        blobs.append(payload)
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text.encode() + b"".join(blobs))


def main():
    OUT.mkdir(exist_ok=True)
    for kg in sorted((ROOT / "examples").glob("*_small.kg")):
        name = kg.stem
        tensors = read_safetensors(GOLDEN / f"{name}.safetensors")
        write_npy(OUT / f"{name}_x.npy", *tensors["x"])
        write_npy(OUT / f"{name}_expected.npy", *tensors["expected.out"])
        params = {k: v for k, v in tensors.items()
                  if k != "x" and not k.startswith("expected.")}
        write_safetensors(OUT / f"{name}.safetensors", params)
        print(f"{name}: x {tensors['x'][1]}, {len(params)} parameters")


if __name__ == "__main__":
    main()
