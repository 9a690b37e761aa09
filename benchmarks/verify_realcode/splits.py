"""The train and eval pipelines of the profiling example's input_fn, built together as a training
script builds them (the file next to it is an unchanged copy of tensorflow/examples'
tensorflow_examples/profiling/imagenet_preprocessing_ineffecient_input_pipeline.py)."""
import imagenet_preprocessing_ineffecient_input_pipeline as imagenet


def train_and_eval(train_files, eval_files, batch_size):
    train = imagenet.input_fn(True, None, batch_size, filenames=train_files)
    evaluation = imagenet.input_fn(False, None, batch_size, filenames=eval_files)
    return train, evaluation
