"""What a training script's graph is made of, and how it lowers to an HLO module.

A :class:`Graph` is one compiled function (a Keras ``train_function``, a TF1
``ipu_compiler.compile`` cluster): inputs with a batch size and dtype, a stack of layers,
weights passed as variables (entry parameters) or frozen (constants), and hyper-parameters
passed as parameters or baked in as constants.  :func:`lower` turns it into the module
TensorFlow's tf2xla bridge would hand to the Poplar backend.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass, field
from typing import Literal

from recompile_doctor.simulate.hlo_emit import Computation, Instr, ModuleBuilder, Shape


@dataclass(frozen=True, slots=True)
class Layer:
    """A layer of a simulated model (the kinds below)."""

    name: str = ""


@dataclass(frozen=True, slots=True)
class Dense(Layer):
    """A fully connected layer, with its activation."""

    units: int = 10
    activation: Literal["relu", "softmax"] | None = None


@dataclass(frozen=True, slots=True)
class Relu(Layer):
    """A ReLU activation."""


@dataclass(frozen=True, slots=True)
class Softmax(Layer):
    """A softmax."""


@dataclass(frozen=True, slots=True)
class Flatten(Layer):
    """Flattens all but the batch dimension."""


@dataclass(frozen=True, slots=True)
class Conv2D(Layer):
    """A 2-D convolution (same padding, stride 1)."""

    filters: int = 8
    kernel: int = 3


@dataclass(frozen=True, slots=True)
class Concat(Layer):
    """``tf.concat`` of this step's output onto ``accumulated`` rows kept from earlier steps."""

    accumulated: int = 0


@dataclass(frozen=True, slots=True)
class Stack(Layer):
    """The ``tf.stack`` fix: write this step's output into a fixed ``slots`` buffer."""

    slots: int = 8


@dataclass(frozen=True, slots=True)
class WhileLoop(Layer):
    """A loop whose trip count is a constant in the graph or a parameter."""

    trip_count: int = 10
    as_constant: bool = True


@dataclass(frozen=True, slots=True)
class CustomOp(Layer):
    """A user custom op; pre-compile needs ``is_hashable=True`` in its metadata function."""

    is_hashable: bool = False


@dataclass(frozen=True, slots=True)
class OutsideCompilation(Layer):
    """A ``tensorflow.python.ipu.scopes.outside_compilation_scope`` (host round trip)."""


@dataclass(frozen=True, slots=True)
class Hyper:
    """A hyper-parameter: a parameter (placeholder/variable) or baked in as a constant."""

    value: float
    as_constant: bool = False


@dataclass(frozen=True, slots=True)
class Graph:
    """One compiled function of a training script."""

    function: str = "train_function"
    layers: tuple[Layer, ...] = ()
    batch: int = 32
    input_shape: tuple[int, ...] = (784,)
    dtype: str = "f32"
    train: bool = True
    weights: Literal["variables", "frozen"] = "variables"
    weights_version: int = 0
    learning_rate: Hyper = field(default_factory=lambda: Hyper(0.01))
    style: Literal["tf2", "tf1"] = "tf2"
    cluster: int = 0
    scope: str = "sequential"
    trace: int = 0

    @property
    def module_name(self) -> str:
        key = zlib.crc32(f"{self.function}/{self.scope}/{self.trace}".encode())
        uid = 100 + key % 900
        if self.style == "tf1":
            nres = sum(2 for layer in self.layers if isinstance(layer, Dense))
            nres = nres if self.weights == "variables" else 0
            return (
                f"cluster_{self.cluster}__XlaCompiledKernel_true__XlaNumConstantArgs_0__"
                f"XlaNumResourceArgs_{nres}_.{uid}"
            )
        fid = 200 + (key >> 10) % 40000
        return (
            f"a_inference_{self.function}_{fid}__XlaMustCompile_true_config_proto___n_007_n_003CPU"
            f"_020_001_n_007_n_003GPU_020_0002_001_000__executor_type____.{uid}"
        )

    @property
    def unhashable(self) -> bool:
        """Contains something pre-compile cannot serialise."""
        return any(
            (isinstance(x, CustomOp) and not x.is_hashable) or isinstance(x, OutsideCompilation)
            for x in self.layers
        )

    @property
    def has_custom_op(self) -> bool:
        return any(isinstance(x, CustomOp) and not x.is_hashable for x in self.layers)


class _Lowering:
    def __init__(self, g: Graph) -> None:
        self.g = g
        self.mb = ModuleBuilder(g.module_name)
        self.entry = Computation(g.module_name, entry=True)
        self.nparams = 0
        self.updates: list[Instr] = []
        self.extra_out: list[Instr] = []
        self.grads: list[tuple[Instr, Instr, Instr, Instr]] = []
        self.lr: Instr | None = None
        self._reducers: dict[str, Computation] = {}

    # helpers ---------------------------------------------------------------------------
    def op(self, opcode: str, shape: Shape, operands: tuple[Instr, ...], attrs: str = "",
           op_type: str = "", where: str = "") -> Instr:  # fmt: skip
        name = f"{self.g.scope}/{where}" if where else ""
        return self.mb.op(self.entry, opcode, shape, operands, attrs, op_type, name)

    def param(self, shape: Shape, op_name: str = "XLA_Args") -> Instr:
        p = self.mb.param(self.entry, self.nparams, shape, op_name=op_name)
        self.nparams += 1
        return p

    def scalar(self, value: float, dtype: str | None = None) -> Instr:
        return self.mb.scalar(self.entry, dtype or self.g.dtype, value)

    def weight(self, shape: Shape, where: str) -> Instr:
        if self.g.weights == "variables":
            return self.param(shape)
        seed = zlib.crc32(f"{where}/{self.g.weights_version}".encode())
        n = shape.size()

        def values() -> list[float]:
            rng = random.Random(seed)
            return [round(rng.gauss(0.0, 0.05), 6) for _ in range(n)]

        return self.mb.constant(
            self.entry, shape, values, f"{seed:x}", "Const", f"{self.g.scope}/{where}"
        )

    def reducer(self, kind: str) -> Computation:
        if kind not in self._reducers:
            dt = self.g.dtype
            comp = self.mb.computation(f"{kind}_{dt.upper()}")
            a = self.mb.param(comp, 0, Shape(dt), base="lhs")
            b = self.mb.param(comp, 1, Shape(dt), base="rhs")
            self.mb.op(comp, "maximum" if kind == "max" else "add", Shape(dt), (a, b))
            self._reducers[kind] = comp
        return self._reducers[kind]

    def reduce(self, x: Instr, init: float, dims: tuple[int, ...], kind: str, where: str) -> Instr:
        keep = tuple(d for i, d in enumerate(x.shape.dims) if i not in dims)
        comp = self.reducer(kind)
        dl = ",".join(str(d) for d in dims)
        return self.op("reduce", x.shape.with_dims(keep), (x, self.scalar(init)),
                       f"dimensions={{{dl}}}, to_apply=%{comp.name}", "Sum", where)  # fmt: skip

    def bcast(self, x: Instr, dims: tuple[int, ...], dims_map: str, where: str = "") -> Instr:
        return self.op("broadcast", x.shape.with_dims(dims), (x,), f"dimensions={{{dims_map}}}",
                       "", where)  # fmt: skip

    # layers ----------------------------------------------------------------------------
    def layer(self, layer: Layer, h: Instr) -> Instr:
        s, dt = h.shape, self.g.dtype
        nm = layer.name
        if isinstance(layer, Dense):
            w = self.weight(Shape(dt, (s.dims[-1], layer.units)), f"{nm}/MatMul/ReadVariableOp")
            b = self.weight(Shape(dt, (layer.units,)), f"{nm}/BiasAdd/ReadVariableOp")
            out = s.with_dims((s.dims[0], layer.units))
            d = self.op("dot", out, (h, w), "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                        "MatMul", f"{nm}/MatMul")  # fmt: skip
            y = self.op("add", out, (d, self.bcast(b, out.dims, "1", f"{nm}/BiasAdd")), "",
                        "BiasAdd", f"{nm}/BiasAdd")  # fmt: skip
            if w.opcode == "parameter":
                self.grads.append((h, y, w, b))
            if layer.activation == "relu":
                return self.layer(Relu(f"{nm}/Relu"), y)
            if layer.activation == "softmax":
                return self.layer(Softmax(f"{nm}/Softmax"), y)
            return y
        if isinstance(layer, Relu):
            zero = self.bcast(self.scalar(0.0), s.dims, "", nm)
            return self.op("maximum", s, (h, zero), "", "Relu", nm)
        if isinstance(layer, Softmax):
            rows = (s.dims[0],)
            mx = self.reduce(h, float("-inf"), (1,), "max", nm)
            sh = self.op("subtract", s, (h, self.bcast(mx, s.dims, "0", nm)), "", "Softmax", nm)
            ex = self.op("exponential", s, (sh,), "", "Softmax", nm)
            sm = self.reduce(ex, 0.0, (1,), "add", nm)
            assert sm.shape.dims == rows
            return self.op("divide", s, (ex, self.bcast(sm, s.dims, "0", nm)), "", "Softmax", nm)
        if isinstance(layer, Flatten):
            flat = 1
            for dim in s.dims[1:]:
                flat *= dim
            return self.op("reshape", s.with_dims((s.dims[0], flat)), (h,), "", "Reshape", nm)
        if isinstance(layer, Conv2D):
            k = self.weight(Shape(dt, (layer.kernel, layer.kernel, s.dims[3], layer.filters)),
                            f"{nm}/Conv2D/ReadVariableOp")  # fmt: skip
            out = s.with_dims((*s.dims[:3], layer.filters))
            p = layer.kernel // 2
            win = f"window={{size={layer.kernel}x{layer.kernel} pad={p}_{p}x{p}_{p}}}"
            return self.op("convolution", out, (h, k), f"{win}, dim_labels=b01f_01io->b01f",
                           "Conv2D", f"{nm}/Conv2D")  # fmt: skip
        if isinstance(layer, Concat):
            acc = self.param(s.with_dims((layer.accumulated, *s.dims[1:])))
            cat = self.op("concatenate", s.with_dims((layer.accumulated + s.dims[0], *s.dims[1:])),
                          (acc, h), "dimensions={0}", "ConcatV2", f"{nm}/concat")  # fmt: skip
            self.extra_out.append(cat)
            return h
        if isinstance(layer, Stack):
            buf = self.param(s.with_dims((layer.slots, *s.dims)))
            idx = self.param(Shape("s32"))
            r = self.op("reshape", s.with_dims((1, *s.dims)), (h,), "", "Pack", f"{nm}/stack")
            zeros = tuple(self.scalar(0, "s32") for _ in s.dims)
            upd = self.op("dynamic-update-slice", buf.shape, (buf, r, idx, *zeros), "",
                          "TensorListSetItem", f"{nm}/TensorListSetItem")  # fmt: skip
            self.extra_out.append(upd)
            return h
        if isinstance(layer, WhileLoop):
            return self.while_loop(layer, h)
        if isinstance(layer, CustomOp):
            cfg = '{\\"is_hashable\\":' + ("true" if layer.is_hashable else "false") + "}"
            return self.op("custom-call", s, (h,),
                           f'custom_call_target="UserOp", backend_config="{cfg}"',
                           "IpuUserOp", f"{nm}/IpuUserOp")  # fmt: skip
        if isinstance(layer, OutsideCompilation):
            return self.outside(layer, h)
        raise TypeError(f"unknown layer {layer!r}")

    def while_loop(self, layer: WhileLoop, h: Instr) -> Instr:
        mb, s = self.mb, h.shape
        elems = [Shape("s32"), s] + ([] if layer.as_constant else [Shape("s32")])
        carry = Shape.tuple_of(*elems)
        cond = mb.computation(f"{layer.name}_cond")
        t = mb.param(cond, 0, carry, base="arg_tuple")
        i = mb.op(cond, "get-tuple-element", Shape("s32"), (t,), "index=0")
        lim = (mb.scalar(cond, "s32", layer.trip_count) if layer.as_constant
               else mb.op(cond, "get-tuple-element", Shape("s32"), (t,), "index=2"))  # fmt: skip
        mb.op(cond, "compare", Shape("pred"), (i, lim), "direction=LT", "Less",
              f"{self.g.scope}/{layer.name}/Less")  # fmt: skip
        body = mb.computation(f"{layer.name}_body")
        bt = mb.param(body, 0, carry, base="arg_tuple")
        bi = mb.op(body, "get-tuple-element", Shape("s32"), (bt,), "index=0")
        bh = mb.op(body, "get-tuple-element", s, (bt,), "index=1")
        ni = mb.op(body, "add", Shape("s32"), (bi, mb.scalar(body, "s32", 1)), "", "AddV2",
                   f"{self.g.scope}/{layer.name}/add")  # fmt: skip
        nh = mb.op(body, "tanh", s, (bh,), "", "Tanh", f"{self.g.scope}/{layer.name}/Tanh")
        outs = [ni, nh]
        if not layer.as_constant:
            outs.append(mb.op(body, "get-tuple-element", Shape("s32"), (bt,), "index=2"))
        mb.op(body, "tuple", carry, tuple(outs))
        init = [self.scalar(0, "s32"), h]
        if not layer.as_constant:
            init.append(self.param(Shape("s32")))
        tup = self.op("tuple", carry, tuple(init))
        loop = self.op("while", carry, (tup,), f"condition=%{cond.name}, body=%{body.name}",
                       "While", f"{layer.name}")  # fmt: skip
        return self.op("get-tuple-element", s, (loop,), "index=1")

    def outside(self, layer: OutsideCompilation, h: Instr) -> Instr:
        s = h.shape
        tok = self.op("after-all", Shape("token"), ())
        send = self.op("send", Shape.tuple_of(s, Shape("u32"), Shape("token")), (h, tok),
                       "channel_id=1, is_host_transfer=true")  # fmt: skip
        done = self.op("send-done", Shape("token"), (send,), "channel_id=1, is_host_transfer=true")
        recv = self.op("recv", Shape.tuple_of(s, Shape("u32"), Shape("token")), (done,),
                       "channel_id=2, is_host_transfer=true")  # fmt: skip
        rd = self.op("recv-done", Shape.tuple_of(s, Shape("token")), (recv,),
                     "channel_id=2, is_host_transfer=true")  # fmt: skip
        return self.op("get-tuple-element", s, (rd,), "index=0", "", f"{layer.name}/host")

    # whole graph -----------------------------------------------------------------------
    def run(self) -> ModuleBuilder:
        g = self.g
        x = self.param(Shape(g.dtype, (g.batch, *g.input_shape)))
        labels: Instr | None = None
        if g.train:
            labels = self.param(Shape(g.dtype, (g.batch,)))  # placeholder; shape fixed below
        h = x
        for layer in g.layers:
            h = self.layer(layer, h)
        outs: list[Instr] = []
        if g.train and labels is not None:
            labels.shape = h.shape
            prod = self.op("multiply", h.shape, (h, labels), "", "Mul", "loss/mul")
            dims = tuple(range(len(h.shape.dims)))
            loss = self.reduce(prod, 0.0, dims, "add", "loss/Sum")
            outs.append(self.op("negate", loss.shape, (loss,), "", "Neg", "loss/Neg"))
            if self.grads:
                lr = g.learning_rate
                self.lr = (
                    self.mb.scalar(self.entry, g.dtype, lr.value, f"{g.scope}/SGD/learning_rate")
                    if lr.as_constant
                    else self.param(Shape(g.dtype))
                )
                for hin, y, w, b in self.grads:
                    gw = self.op("dot", w.shape, (hin, y),
                                 "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                                 "MatMul", "gradients/MatMul_grad/MatMul_1")  # fmt: skip
                    gb = self.reduce(y, 0.0, (0,), "add", "gradients/BiasAddGrad")
                    for var, grad in ((w, gw), (b, gb)):
                        lrb = self.bcast(self.lr, var.shape.dims, "", "SGD/mul")
                        upd = self.op("multiply", var.shape, (lrb, grad), "", "Mul", "SGD/mul")
                        outs.append(self.op("subtract", var.shape, (var, upd), "",
                                            "ResourceApplyGradientDescent", "SGD/update"))  # fmt: skip
        else:
            outs.append(h)
        outs.extend(self.extra_out)
        root = Shape.tuple_of(*(o.shape for o in outs))
        self.mb.op(self.entry, "tuple", root, tuple(outs), "", "", "XLA_Retvals")
        # Parameters first, in parameter order, as tf2xla emits them.
        params = [i for i in self.entry.instrs if i.opcode == "parameter"]
        rest = [i for i in self.entry.instrs if i.opcode != "parameter"]
        self.entry.instrs = params + rest
        self.mb.computations.append(self.entry)
        return self.mb


def lower(graph: Graph) -> ModuleBuilder:
    """The HLO module TensorFlow would build for ``graph``."""
    return _Lowering(graph).run()
