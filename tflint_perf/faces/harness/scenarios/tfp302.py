"""TFP302 unaligned-batch-size: a model.fit batch size that is not a multiple of 8, under mixed precision."""

from tflint_perf.faces.harness.scenarios import rule_scenario
from tflint_perf.faces.harness.scenarios.mixed_precision_mlp import mlp_program

BEFORE = mlp_program("SAMPLES = 65520\nFEATURES = 1024", 2048, "1020", "1024")

SCENARIO = rule_scenario(
    "TFP302", "unaligned-batch-size",
    "an MLP 1,024 -> 2,048 -> 2,048 -> 10 in mixed_float16, batch 1,020, one epoch of 65,520 samples",
    BEFORE, [("batch_size=1020", "batch_size=1024")],
    fix_safety="unsafe", equivalence="batch_size_change",
    quick={"SAMPLES": 1020, "FEATURES": 16},
    needs_gpu=True,
    meaning=(
        "The batch size is a dimension of every dense layer's matrix multiplies; an aligned batch fills tensor-core "
        "tiles on an NVIDIA GPU. Both variants train one epoch over the same samples. On a CPU there is no reliable "
        "effect, so the scenario runs only where a GPU is visible. The fix changes the optimisation (the check: "
        "same model, same output shape, finite loss)."
    ),
)
