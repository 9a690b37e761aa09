"""TFP301 unaligned-layer-dim: hidden Dense widths that are not a multiple of 8, under mixed precision."""

from tflint_perf.faces.harness.scenarios import rule_scenario
from tflint_perf.faces.harness.scenarios.mixed_precision_mlp import mlp_program

BEFORE = mlp_program("SAMPLES = 65536\nFEATURES = 1024\nBATCH = 1024", 2500, "BATCH", "BATCH")

SCENARIO = rule_scenario(
    "TFP301", "unaligned-layer-dim",
    "an MLP 1,024 -> 2,500 -> 2,500 -> 10 in mixed_float16, one epoch of 65,536 samples",
    BEFORE, [(
        'keras.layers.Dense(2500, activation="relu"),\n    keras.layers.Dense(2500, activation="relu"),',
        'keras.layers.Dense(2504, activation="relu"),\n    keras.layers.Dense(2504, activation="relu"),',
    )],
    fix_safety="unsafe", equivalence="architecture_change",
    quick={"SAMPLES": 64, "FEATURES": 16, "BATCH": 32},
    needs_gpu=True,
    meaning=(
        "Tensor cores work on tiles whose sides are multiples of 8 in 16-bit math: the aligned widths do more "
        "arithmetic yet should train faster on an NVIDIA GPU. On a CPU there is no reliable effect, so the "
        "scenario runs only where a GPU is visible. The fix changes the architecture (the check: same output "
        "shape, finite outputs, a different parameter count)."
    ),
)
