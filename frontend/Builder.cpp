#include "Builder.h"

namespace kiln {

GraphBuilder::GraphBuilder(std::string name)
    : graph_(std::make_unique<Graph>(std::move(name))) {}

Graph &GraphBuilder::graph() {
  if (!graph_)
    llvm::report_fatal_error("GraphBuilder::graph() after finish(): the "
                             "graph has moved to finish()'s caller");
  return *graph_;
}

Value *GraphBuilder::record(llvm::Expected<Value *> v) {
  if (v)
    return *v;
  if (!failed()) {
    llvm::consumeError(std::move(error_));
    error_ = v.takeError();
    failed_ = true;
  } else
    llvm::consumeError(v.takeError());
  return nullptr;
}

Value *GraphBuilder::input(llvm::StringRef name, DType dtype, Shape shape) {
  if (failed() || !graph_)
    return nullptr;
  return record(graph_->addInput(name, TensorType{dtype, std::move(shape)}));
}

Value *GraphBuilder::param(llvm::StringRef name, DType dtype, Shape shape,
                           std::optional<Initializer> init) {
  if (failed() || !graph_)
    return nullptr;
  return record(
      graph_->addParam(name, TensorType{dtype, std::move(shape)}, init));
}

Value *GraphBuilder::call(OpKind op, llvm::ArrayRef<Operand> operands,
                          llvm::ArrayRef<NamedAttr> attrs,
                          llvm::StringRef name) {
  if (failed() || !graph_)
    return nullptr;
  llvm::SmallVector<Value *, 3> values;
  for (const Operand &o : operands) {
    if (!o.present())
      values.push_back(nullptr);
    else if (o.isBool())
      values.push_back(graph_->addBoolLiteral(o.number() != 0));
    else if (o.isNumber())
      values.push_back(graph_->addLiteral(o.number(), o.isInt()));
    else
      values.push_back(o.value());
  }
  return record(graph_->addNode(op, values, attrs, name));
}

Value *GraphBuilder::linear(Operand x, Operand w, Operand bias) {
  return call(OpKind::Linear, {x, w, bias});
}

Value *GraphBuilder::matmul(Operand a, Operand b) {
  return call(OpKind::Matmul, {a, b});
}

static llvm::SmallVector<NamedAttr, 5> convAttrs(const Conv2dOptions &o,
                                                 bool transposed) {
  llvm::SmallVector<NamedAttr, 5> attrs = {
      {"stride", Attr::ofInts({o.strideH, o.strideW}), {}},
      {"padding", Attr::ofInts({o.padH, o.padW}), {}},
      {"dilation", Attr::ofInts({o.dilationH, o.dilationW}), {}},
      {"groups", Attr::ofInt(o.groups), {}},
  };
  if (transposed)
    attrs.push_back(
        {"output_padding", Attr::ofInts({o.outputPadH, o.outputPadW}), {}});
  return attrs;
}

Value *GraphBuilder::conv2d(Operand x, Operand w, Operand bias,
                            const Conv2dOptions &o) {
  return call(OpKind::Conv2d, {x, w, bias}, convAttrs(o, false));
}

Value *GraphBuilder::convTranspose2d(Operand x, Operand w, Operand bias,
                                     const Conv2dOptions &o) {
  return call(OpKind::ConvTranspose2d, {x, w, bias}, convAttrs(o, true));
}

Value *GraphBuilder::groupNorm(Operand x, int64_t groups, Operand weight,
                               Operand bias, double eps) {
  return call(
      OpKind::GroupNorm, {x, weight, bias},
      {{"groups", Attr::ofInt(groups), {}}, {"eps", Attr::ofFloat(eps), {}}});
}

Value *GraphBuilder::reduce(OpKind op, Operand x, llvm::ArrayRef<int64_t> dims,
                            bool keepdim) {
  if (getOpInfo(op).family != OpFamily::Reduction)
    return record(userError("GraphBuilder::reduce takes min, max, sum, mean "
                            "or logsumexp, not {}",
                            getOpInfo(op).name.str()));
  llvm::SmallVector<NamedAttr, 2> attrs;
  if (!dims.empty())
    attrs.push_back({"dim", Attr::ofInts(dims), {}});
  if (keepdim)
    attrs.push_back({"keepdim", Attr::ofBool(true), {}});
  return call(op, {x}, attrs);
}

Value *GraphBuilder::leakyRelu(Operand x, double slope) {
  return call(OpKind::LeakyRelu, {x},
              {{"negative_slope", Attr::ofFloat(slope), {}}});
}

Value *GraphBuilder::gelu(Operand x, bool tanhApproximation) {
  if (!tanhApproximation)
    return call(OpKind::Gelu, {x});
  return call(OpKind::Gelu, {x}, {{"approximate", Attr::ofString("tanh"), {}}});
}

void GraphBuilder::output(Value *v) {
  // A null value after an error is that error's (reported by finish()).
  if (failed() || !graph_)
    return;
  if (llvm::Error e = graph_->addOutput(v))
    record(std::move(e));
}

llvm::Expected<std::unique_ptr<Graph>> GraphBuilder::finish() {
  if (!graph_)
    return userError("GraphBuilder::finish() was already called; a builder "
                     "makes one graph");
  if (failed()) {
    graph_.reset(); // a second finish() says so, not an empty error
    return std::move(error_);
  }
  if (graph_->outputs().empty())
    return userError("graph '{}' has no outputs; call output() on the "
                     "values it returns",
                     graph_->name());
  return std::move(graph_);
}

} // namespace kiln
