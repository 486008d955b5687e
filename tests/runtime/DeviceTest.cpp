#include "Device.h"
#include "RuntimeTestUtil.h"

namespace kiln::rt {
namespace {

/// The GPU, or null with the reason in `why`.
Device *gpu(std::string &why) {
  llvm::Expected<Device *> d = Device::open(0);
  if (d)
    return *d;
  why = llvm::toString(d.takeError());
  return nullptr;
}

TEST(Device, OpenWithoutAGpuIsAClearError) {
  std::string why;
  if (Device *d = gpu(why))
    GTEST_SKIP() << "a GPU is present: " << d->info().name;
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why.rfind("no GPU", 0), 0u) << why;
  // Asking again gives the same reason, not an empty one.
  std::string again;
  EXPECT_EQ(gpu(again), nullptr);
  EXPECT_EQ(again, why);
}

TEST(Device, OpenTwiceGivesTheSameDevice) {
  std::string why;
  Device *d = gpu(why);
  if (!d)
    GTEST_SKIP() << why;
  const double openMs = d->openMs();
  EXPECT_GT(openMs, 0.0) << "the first open is timed";
  EXPECT_EQ(gpu(why), d);
  EXPECT_EQ(d->openMs(), openMs) << "a second open() takes no new time";
  EXPECT_GT(d->l2Bytes(), 0);
  EXPECT_GE(d->maxSharedPerBlockOptin(), 48 * 1024);
  EXPECT_GE(d->maxSharedPerMultiprocessor(), d->maxSharedPerBlockOptin());
  llvm::Expected<std::pair<size_t, size_t>> mem = d->memoryInfo();
  ASSERT_TRUE(bool(mem)) << llvm::toString(mem.takeError());
  EXPECT_GT(mem->second, mem->first);
}

TEST(Device, ProbeGivesTheTraitsOfTheOpenedDevice) {
  llvm::Expected<DeviceTraits> t = Device::probe(0);
  std::string why;
  Device *d = gpu(why);
  if (!d) {
    ASSERT_FALSE(bool(t)) << "probe found a GPU that open() cannot open";
    const std::string probeWhy = llvm::toString(t.takeError());
    EXPECT_EQ(probeWhy.rfind("no GPU", 0), 0u) << probeWhy;
    EXPECT_EQ(driverStartMs(), 0.0) << "no probe succeeded";
    GTEST_SKIP() << why;
  }
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  const double start = driverStartMs();
  EXPECT_GT(start, 0.0) << "the first successful probe is timed";
  ASSERT_TRUE(bool(Device::probe(0)));
  EXPECT_EQ(driverStartMs(), start) << "only the first one";
  EXPECT_EQ(t->info.name, d->info().name);
  EXPECT_EQ(t->info.arch(), d->info().arch());
  EXPECT_EQ(t->info.multiprocessors, d->info().multiprocessors);
  EXPECT_EQ(t->l2Bytes, d->l2Bytes());
  EXPECT_EQ(t->maxSharedOptin, d->maxSharedPerBlockOptin());
  EXPECT_EQ(t->maxSharedPerSM, d->maxSharedPerMultiprocessor());
  EXPECT_EQ(t->maxThreadsPerSM, d->maxThreadsPerMultiprocessor());
  EXPECT_GE(t->maxThreadsPerSM, 1024);
}

TEST(Device, ProbeOfAMissingOrdinalSaysSo) {
  llvm::Expected<DeviceTraits> t = Device::probe(4096);
  ASSERT_FALSE(bool(t)) << "GPU 4096 exists?";
  const std::string why = llvm::toString(t.takeError());
  EXPECT_EQ(why.rfind("no GPU", 0), 0u) << why;
}

/// test::patternRequest's kernel, compiled for `d` and loaded.
struct PatternKernel {
  Module mod;
  void *fn = nullptr;
};
llvm::Expected<PatternKernel> loadPatternKernel(Device &d) {
  llvm::Expected<CompileResult> c =
      compileCuda(test::patternRequest(d.info().arch()));
  if (!c)
    return c.takeError();
  llvm::Expected<Module> mod = d.loadModule(c->cubin);
  if (!mod)
    return mod.takeError();
  llvm::Expected<void *> fn = mod->function("fill_pattern");
  if (!fn)
    return fn.takeError();
  return PatternKernel{std::move(*mod), *fn};
}

TEST(Device, ACompiledKernelWritesItsPattern) {
  std::string why;
  Device *d = gpu(why);
  if (!d)
    GTEST_SKIP() << why;
  llvm::Expected<PatternKernel> k = loadPatternKernel(*d);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  void *fn = k->fn;
  llvm::Expected<FunctionAttributes> attrs = d->attributes(fn);
  ASSERT_TRUE(bool(attrs)) << llvm::toString(attrs.takeError());
  EXPECT_GT(attrs->numRegs, 0);
  EXPECT_FALSE(bool(k->mod.function("no_such_kernel")));

  unsigned n = 1000;
  llvm::Expected<Buffer> buf = d->alloc(n * sizeof(unsigned));
  ASSERT_TRUE(bool(buf)) << llvm::toString(buf.takeError());
  ASSERT_FALSE(bool(d->fill32(buf->ptr(), 0xffffffffu, n)));
  std::vector<unsigned> host(n, 0);
  ASSERT_FALSE(bool(d->copyToHost(host.data(), buf->ptr(), n * 4)));
  EXPECT_EQ(host[0], 0xffffffffu);
  EXPECT_EQ(host[n - 1], 0xffffffffu);

  llvm::Expected<StreamHandle> stream = d->createStream();
  ASSERT_TRUE(bool(stream)) << llvm::toString(stream.takeError());
  llvm::Expected<Event> start = d->createEvent(), stop = d->createEvent();
  ASSERT_TRUE(start && stop);
  DevicePtr out = buf->ptr();
  void *args[] = {&out, &n};
  LaunchConfig cfg;
  cfg.grid[0] = (n + 255) / 256;
  cfg.block[0] = 256;
  ASSERT_FALSE(bool(start->record(*stream)));
  llvm::Error launched = d->launch(fn, cfg, args, *stream);
  ASSERT_FALSE(bool(launched)) << llvm::toString(std::move(launched));
  ASSERT_FALSE(bool(stop->record(*stream)));
  ASSERT_FALSE(bool(d->copyToHost(host.data(), out, n * 4, *stream)));
  ASSERT_FALSE(bool(d->synchronize(*stream)));
  for (unsigned i = 0; i < n; ++i)
    ASSERT_EQ(host[i], test::pattern(i)) << "at " << i;
  llvm::Expected<float> ms = stop->elapsedSince(*start);
  ASSERT_TRUE(bool(ms)) << llvm::toString(ms.takeError());
  EXPECT_GE(*ms, 0.0f);

  // A copy on the device, on the default stream.
  llvm::Expected<Buffer> copy = d->alloc(n * sizeof(unsigned));
  ASSERT_TRUE(bool(copy));
  ASSERT_FALSE(bool(d->copyDeviceToDevice(copy->ptr(), out, n * 4)));
  std::vector<unsigned> back(n, 0);
  ASSERT_FALSE(bool(d->copyToDevice(out, back.data(), n * 4)));
  ASSERT_FALSE(bool(d->copyToHost(back.data(), copy->ptr(), n * 4)));
  EXPECT_EQ(back, host);

  // A cooperative grid far larger than the device holds is refused clearly.
  cfg.cooperative = true;
  cfg.grid[0] = 1u << 30;
  llvm::Error tooBig = d->launch(fn, cfg, args);
  ASSERT_TRUE(bool(tooBig));
  EXPECT_NE(llvm::toString(std::move(tooBig)).find("cooperative launch"),
            std::string::npos);
  d->destroyStream(*stream);
}

// Two launches recorded as a graph (the second cooperative), replayed, then
// replayed again with the first launch moved to another buffer.
TEST(Device, AGraphReplaysItsLaunchesWithNewArguments) {
  std::string why;
  Device *d = gpu(why);
  if (!d)
    GTEST_SKIP() << why;
  llvm::Expected<PatternKernel> k = loadPatternKernel(*d);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  void *fn = k->fn;

  unsigned n = 777, half = n / 2;
  std::vector<Buffer> bufs;
  for (int i = 0; i < 3; ++i) {
    llvm::Expected<Buffer> b = d->alloc(n * sizeof(unsigned));
    ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
    bufs.push_back(std::move(*b));
  }
  DevicePtr p0 = bufs[0].ptr(), p1 = bufs[1].ptr();
  void *first[] = {&p0, &n}, *second[] = {&p1, &half};
  LaunchConfig cfg;
  cfg.grid[0] = (n + 127) / 128;
  cfg.block[0] = 128;
  LaunchConfig coop = cfg;
  coop.cooperative = true;
  llvm::Expected<LaunchGraph> g =
      d->recordGraph({{fn, cfg, first}, {fn, coop, second}});
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  EXPECT_EQ(g->size(), 2u);

  // Each buffer poisoned, the graph replayed: which buffers hold the
  // pattern, and over how many elements.
  auto replay = [&](std::vector<unsigned> &written) {
    written.clear();
    for (Buffer &b : bufs)
      ASSERT_FALSE(bool(d->fill32(b.ptr(), 0xdeadbeefu, n)));
    llvm::Error e = g->launch(nullptr);
    ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
    for (Buffer &b : bufs) {
      std::vector<unsigned> host(n);
      ASSERT_FALSE(bool(d->copyToHost(host.data(), b.ptr(), n * 4)));
      unsigned k = 0;
      while (k < n && host[k] == test::pattern(k))
        ++k;
      for (unsigned i = k; i < n; ++i)
        ASSERT_EQ(host[i], 0xdeadbeefu) << "element " << i << " written";
      written.push_back(k);
    }
  };
  std::vector<unsigned> written;
  replay(written);
  EXPECT_EQ(written, (std::vector<unsigned>{n, half, 0}));
  replay(written); // a second replay of the same launches
  EXPECT_EQ(written, (std::vector<unsigned>{n, half, 0}));

  DevicePtr p2 = bufs[2].ptr();
  void *moved[] = {&p2, &n};
  llvm::Error e = g->setArgs(0, moved);
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  replay(written);
  EXPECT_EQ(written, (std::vector<unsigned>{0, half, n}));
}

TEST(Device, AnImpossibleAllocationSaysHowMuchWasAsked) {
  std::string why;
  Device *d = gpu(why);
  if (!d)
    GTEST_SKIP() << why;
  llvm::Expected<Buffer> b = d->alloc(size_t(1) << 50);
  ASSERT_FALSE(bool(b));
  std::string msg = llvm::toString(b.takeError());
  EXPECT_EQ(msg.rfind("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("(asked for 1048576.00 GiB)"), std::string::npos) << msg;
}

} // namespace
} // namespace kiln::rt
