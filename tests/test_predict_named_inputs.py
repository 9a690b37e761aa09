"""TFP203 on a `predict` fed a dict of named inputs (analysis/rows.py), written from Hvass-Labs'
translation and captioning notebooks (a development tree added for issue 22): greedy decoding calls
`predict` once per generated token on `{"decoder_initial_state": state, "decoder_input": tokens}`,
where `tokens = np.zeros(shape=shape)` and `shape = (1, max_tokens)` was named a line before. Named
inputs share the batch dimension, so one known input says how many rows the call has; a dict whose
inputs are all of unknown or large size stays silent."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

DECODE = """
    import numpy as np
    from tensorflow.keras.models import Model

    model_decoder = Model(inputs=[decoder_initial_state, decoder_input], outputs=[decoder_output])

    def translate(input_tokens):
        initial_state = model_encoder.predict(input_tokens)
        shape = ({rows}, max_tokens)
        decoder_input_data = np.zeros(shape=shape, dtype=np.int)
        token_int = token_start
        count_tokens = 0
        while token_int != token_end and count_tokens < max_tokens:
            decoder_input_data[0, count_tokens] = token_int
            x_data = {{
                'decoder_initial_state': initial_state,
                'decoder_input': decoder_input_data
            }}
            decoder_output = model_decoder.predict(x_data)
            token_int = np.argmax(decoder_output[0, count_tokens, :])
            count_tokens += 1
"""


def found(source: str):
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(source), ["TFP203"], filename="translate.py"))


def test_greedy_decoding_on_a_dict_holding_one_sample_is_reported():
    assert found(DECODE.format(rows=1)) == [(19, "TFP203")]


def test_the_same_dict_holding_many_rows_is_not():
    assert found(DECODE.format(rows=4096)) == []


def test_a_dict_of_inputs_of_unknown_size_is_not():
    source = DECODE.format(rows=1).replace("np.zeros(shape=shape, dtype=np.int)", "load_tokens(shape)")
    assert found(source) == []
