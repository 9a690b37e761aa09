"""What tensor-core alignment is worth: TFP301's layer widths and TFP302's batch sizes, timed on a GPU.

TensorFlow cannot run where the GPU is lent, so this times the same cuBLAS and cuDNN kernels through
PyTorch: a Dense layer's training step is three GEMMs (forward, activation gradient, weight
gradient) over its units, fan-in and batch; an LSTM and a convolution go to cuDNN. Each case times
an unaligned width against the width TFP301's fix rounds it up to, in each precision the rule
distinguishes: float32 with TF32 (TensorFlow's default on Ampere and later), float32 without it,
bfloat16 and float16. The ratio printed is the unaligned layer's time over the rounded-up one's:
above 1, the fix (which does more arithmetic) is faster.

    python benchmarks/tensor_core_alignment.py [--repeats 30] [--json OUT.json]

Needs PyTorch and a CUDA GPU; prints the device, the library versions and one line per case.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from typing import Callable, Dict, List, Tuple

PRECISIONS = ("tf32", "fp32", "bf16", "fp16")
ALIGNMENT = {"tf32": 4, "fp32": 4, "bf16": 8, "fp16": 8}

# (name, batch, fan_in, units): Dense widths seen in real training code, from toy course models
# (an LSTM's 150 units, batches of 32) to a wide classifier head (1000 units, batches of 256).
DENSE_CASES: Tuple[Tuple[str, int, int, int], ...] = (
    ("course MLP", 32, 784, 150),
    ("course MLP", 32, 784, 500),
    ("mid-size", 128, 512, 500),
    ("mid-size", 128, 1024, 1000),
    ("wide head", 256, 2048, 1000),
    ("wide head", 256, 4096, 4090),
)
# (name, batch, fan_in, units) where the batch is what TFP302 judges.
BATCH_CASES: Tuple[Tuple[str, int, int, int], ...] = (
    ("batch 100", 100, 1024, 1024),
    ("batch 250", 250, 2048, 2048),
    ("batch 1000", 1000, 4096, 4096),
)
# (name, batch, sequence, input size, hidden units)
LSTM_CASES: Tuple[Tuple[str, int, int, int, int], ...] = (
    ("text-generation LSTM", 64, 40, 100, 150),
    ("seq2seq LSTM", 64, 50, 256, 500),
)
# (name, batch, channels in, channels out, image side)
CONV_CASES: Tuple[Tuple[str, int, int, int, int], ...] = (
    ("conv 100 filters", 64, 64, 100, 56),
    ("conv 250 filters", 32, 128, 250, 28),
)


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed repetitions per case (median reported)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("needs PyTorch (and a CUDA GPU)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"cuDNN {torch.backends.cudnn.version()}")
    print("ratio = time(unaligned) / time(rounded up); above 1.00 the rounded-up layer is faster despite its extra work")
    print("timing: graph = the step's kernels replayed from a CUDA graph (no launch overhead); eager = as launched\n")
    torch.backends.cudnn.benchmark = True
    timer = _Timer(torch, args.repeats)
    rows: List[Dict[str, object]] = []
    for precision in PRECISIONS:
        _set_precision(torch, precision)
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision, torch.float32)
        # (what is aligned, its size, how to build the step at a size, the case, whether a CUDA graph can hold it)
        cases = [("Dense units", units, lambda u, b=batch, k=fan_in: _dense_step(torch, dtype, b, k, u),
                  f"{name}: batch {batch}, fan-in {fan_in}", True) for name, batch, fan_in, units in DENSE_CASES]
        cases += [("batch size", batch, lambda b, k=fan_in, u=units: _dense_step(torch, dtype, b, k, u),
                   f"{name}: Dense {fan_in} -> {units}", True) for name, batch, fan_in, units in BATCH_CASES]
        cases += [("LSTM units", hidden, lambda h, b=batch, t=steps, i=inputs: _lstm_step(torch, dtype, b, t, i, h),
                   f"{name}: batch {batch}, {steps} steps, input {inputs}", True)
                  for name, batch, steps, inputs, hidden in LSTM_CASES]
        cases += [("Conv2D filters", filters, lambda f, b=batch, c=channels_in, s=side: _conv_step(torch, dtype, b, c, f, s),
                   f"{name}: batch {batch}, {channels_in} channels in, {side}x{side}", False)
                  for name, batch, channels_in, filters, side in CONV_CASES]
        for what, size, build, case, capture in cases:
            aligned = round_up(size, ALIGNMENT[precision])
            if aligned == size:
                continue
            times = [timer.time(lambda n=n: build(n), capture=capture) for n in (size, aligned)]
            rows.append(_row(precision, what, case, size, aligned, times, timer.last_mode))
    _print(rows)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}, handle, indent=1)
    return 0


class _Timer:
    """Median GPU time of a training step built once per shape, timed with CUDA events after a warm-up.

    The step is captured in a CUDA graph and replayed, so that the figure is the kernels' time and not
    PyTorch's launch overhead (a compiled `tf.function` step launches from C++). Convolutions, whose
    cuDNN autotuning cannot run inside a capture, are timed as launched (their milliseconds dwarf the
    launch), and their rows say so."""

    def __init__(self, torch, repeats: int) -> None:
        self.torch, self.repeats = torch, repeats
        self.last_mode = ""

    def time(self, build: Callable[[], Callable[[], None]], capture: bool = True) -> float:
        torch = self.torch
        try:
            step = build()
            step()
        except RuntimeError as error:  # a kernel this precision lacks (cuDNN's LSTM in bfloat16 on some versions)
            print(f"  skipped: {str(error).splitlines()[0][:100]}")
            return float("nan")
        inner = 20  # steps per timed sample
        run = self._captured(step, inner) if capture else None
        self.last_mode = "graph" if run is not None else "eager"
        if run is None:
            def run() -> None:
                for _ in range(inner):
                    step()
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        samples = []
        for _ in range(self.repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            torch.cuda.synchronize()
            samples.append(start.elapsed_time(end) * 1000.0 / inner)  # microseconds per step
        return statistics.median(samples)

    def _captured(self, step: Callable[[], None], inner: int):
        torch = self.torch
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    step()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for _ in range(inner):
                    step()
            return graph.replay
        except RuntimeError:
            torch.cuda.synchronize()
            return None


def _set_precision(torch, precision: str) -> None:
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def _dense_step(torch, dtype, batch: int, fan_in: int, units: int) -> Callable[[], None]:
    """The three GEMMs of a Dense layer's training step: forward, activation gradient, weight gradient."""
    x = torch.randn(batch, fan_in, device="cuda", dtype=dtype)
    weight = torch.randn(units, fan_in, device="cuda", dtype=dtype)
    grad = torch.randn(batch, units, device="cuda", dtype=dtype)
    out = torch.empty(batch, units, device="cuda", dtype=dtype)
    grad_x = torch.empty(batch, fan_in, device="cuda", dtype=dtype)
    grad_w = torch.empty(units, fan_in, device="cuda", dtype=dtype)

    def step() -> None:
        torch.mm(x, weight.t(), out=out)
        torch.mm(grad, weight, out=grad_x)
        torch.mm(grad.t(), x, out=grad_w)
    return step


def _lstm_step(torch, dtype, batch: int, steps: int, inputs: int, hidden: int) -> Callable[[], None]:
    x = torch.randn(steps, batch, inputs, device="cuda", dtype=dtype, requires_grad=True)
    layer = torch.nn.LSTM(inputs, hidden, device="cuda", dtype=dtype)
    layer.flatten_parameters()
    grad = torch.randn(steps, batch, hidden, device="cuda", dtype=dtype)

    def step() -> None:
        layer(x)[0].backward(grad)
    return step


def _conv_step(torch, dtype, batch: int, channels_in: int, filters: int, side: int) -> Callable[[], None]:
    x = torch.randn(batch, channels_in, side, side, device="cuda", dtype=dtype, requires_grad=True).to(memory_format=torch.channels_last)
    layer = torch.nn.Conv2d(channels_in, filters, 3, padding=1, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)
    grad = torch.randn(batch, filters, side, side, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)

    def step() -> None:
        layer(x).backward(grad)
    return step


def _row(precision: str, what: str, case: str, width: int, aligned: int, times: List[float], timing: str) -> Dict[str, object]:
    return {"precision": precision, "what": what, "case": case, "width": width, "aligned": aligned, "timing": timing,
            "us_unaligned": round(times[0], 1), "us_aligned": round(times[1], 1), "ratio": round(times[0] / times[1], 2)}


def _print(rows: List[Dict[str, object]]) -> None:
    print(f"{'precision':9} {'what':14} {'width':>6} {'->':>2} {'to':>5} {'us/step':>9} {'us/step':>9} {'ratio':>6} {'timing':6}  case")
    for row in rows:
        print(f"{row['precision']:9} {row['what']:14} {row['width']:>6} {'->':>2} {row['aligned']:>5} "
              f"{row['us_unaligned']:>9} {row['us_aligned']:>9} {row['ratio']:>6} {row['timing']:6}  {row['case']}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
