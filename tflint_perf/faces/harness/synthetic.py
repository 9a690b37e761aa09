"""``verify --synthetic``: the pipeline's in-memory data replaced by random data of the same
shapes, dtypes and value ranges, identically for the original and the fixed pipeline."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, List


@contextlib.contextmanager
def synthetic_sources(tf, counter: List[int]) -> Iterator[None]:
    """Replace the data given to ``from_tensor_slices`` / ``from_tensors`` with random data of the
    same shapes and dtypes (and value ranges). The n-th source made gets seed n, so the original
    and the fixed pipeline see the same synthetic data."""
    import numpy as np

    dataset_class = tf.data.Dataset
    originals = {name: dataset_class.__dict__[name] for name in ("from_tensor_slices", "from_tensors")}

    def replacing(original):
        function = original.__func__ if isinstance(original, staticmethod) else original

        def make(tensors, *args, **kwargs):
            rng = np.random.default_rng(counter[0])
            counter[0] += 1
            return function(_map_leaves(tensors, lambda leaf: _random_like(np.asarray(leaf), rng)), *args, **kwargs)

        return staticmethod(make)

    for name, original in originals.items():
        setattr(dataset_class, name, replacing(original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(dataset_class, name, original)


def _map_leaves(value: Any, function: Callable[[Any], Any]) -> Any:
    """tf.data's structure rules: tuples and dicts nest; anything else (lists too) is one tensor."""
    if isinstance(value, dict):
        return type(value)((key, _map_leaves(item, function)) for key, item in value.items())
    if isinstance(value, tuple):
        items = [_map_leaves(item, function) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return function(value)


def _random_like(array, rng):
    import numpy as np

    if array.size == 0:
        return array
    if array.dtype == np.bool_:
        return rng.random(array.shape) < 0.5
    if np.issubdtype(array.dtype, np.integer):
        return rng.integers(array.min(), array.max(), size=array.shape, endpoint=True).astype(array.dtype)
    if np.issubdtype(array.dtype, np.floating):
        low, high = float(array.min()), float(array.max())
        return rng.uniform(low, high, size=array.shape).astype(array.dtype) if high > low else array.copy()
    return array  # strings and other kinds stay as they are
