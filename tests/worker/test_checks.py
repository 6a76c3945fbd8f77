"""Correctness checks and timing figures, on hand-made arrays and marks (no TensorFlow)."""

from __future__ import annotations

import numpy as np
import pytest

from worker.checks import (
    ExpectedExamples,
    batch_signatures,
    decode_array,
    encode_array,
    match_epoch,
    multiset_check,
    range_check,
    shuffle_check,
)
from worker.timing import MarksInvalid, pipeline_timing, run_timing, speed_points

RNG = np.random.default_rng(5)
PIXELS = RNG.integers(0, 256, size=(12, 32, 32, 3)).astype(np.uint8)
LABELS = np.arange(12) % 3


def expected_images(flips: bool = False) -> ExpectedExamples:
    images = PIXELS.astype(np.float32) / 255.0
    return ExpectedExamples(
        signatures=batch_signatures(images),
        labels=LABELS.astype(np.int64),
        shards=np.arange(12) // 4,
        flipped_signatures=batch_signatures(images[:, :, ::-1]) if flips else None,
    )


def test_equivalent_scalings_match_and_a_wrong_one_does_not():
    expected = expected_images()
    order = RNG.permutation(12)
    divided = PIXELS[order].astype(np.float32) / 255.0
    converted = (PIXELS[order].astype(np.float64) * (1.0 / 255.0)).astype(np.float32)
    for images in (divided, converted):
        match = match_epoch(batch_signatures(images), LABELS[order], expected, 0.5 / 255)
        assert match.indices.tolist() == order.tolist()
    off_by_two = np.clip(divided + 2 / 255, 0, 1)
    assert (match_epoch(batch_signatures(off_by_two), LABELS[order], expected, 0.5 / 255).indices == -1).all()
    wrong_labels = (LABELS[order] + 1) % 3
    assert (match_epoch(batch_signatures(divided), wrong_labels, expected, 0.5 / 255).indices == -1).all()


def test_flipped_images_match_their_example_and_say_they_are_flipped():
    images = PIXELS.astype(np.float32) / 255.0
    flipped = images.copy()
    flipped[::2] = images[::2, :, ::-1]
    match = match_epoch(batch_signatures(flipped), LABELS, expected_images(flips=True), 1 / 255)
    assert match.indices.tolist() == list(range(12))
    assert match.flipped.tolist() == [index % 2 == 0 for index in range(12)]
    assert (match_epoch(batch_signatures(flipped), LABELS, expected_images(), 1 / 255).indices[::2] == -1).all()


def test_multiset_check_counts_duplicates_missing_and_unknown_examples():
    expected = expected_images()
    images = PIXELS.astype(np.float32) / 255.0
    images[3] = images[4]
    labels = LABELS.copy()
    labels[3] = labels[4]
    images[7] = 0.5
    match = match_epoch(batch_signatures(images), labels, expected, 0.5 / 255)
    check = multiset_check([match], 12, "check the decoding")
    assert not check.passed
    assert check.message == (
        "epoch 1: 1 example matches no input example (check the decoding); 1 example appears more than once;"
        " 2 input examples never appear."
    )
    good = match_epoch(batch_signatures(PIXELS.astype(np.float32) / 255.0), LABELS, expected, 0.5 / 255)
    assert multiset_check([good, good], 12, "check the decoding").passed


def test_shuffle_check_needs_a_new_order_that_is_not_file_order():
    expected = expected_images()
    images = PIXELS.astype(np.float32) / 255.0

    def epoch(order: np.ndarray):
        return match_epoch(batch_signatures(images[order]), LABELS[order], expected, 0.5 / 255)

    in_order, first, second = epoch(np.arange(12)), epoch(RNG.permutation(12)), epoch(RNG.permutation(12))
    assert "file order" in shuffle_check([in_order, first]).message
    assert "same order" in shuffle_check([first, first]).message
    assert shuffle_check([first, second]).passed


def test_range_check_recognises_unscaled_pixels():
    assert "divide by 255" in range_check(0.0, 255.0, [0.0, 1.0], "Images").message
    assert range_check(0.0, 1.0, [0.0, 1.0], "Images").passed


def test_arrays_survive_encoding():
    array = RNG.normal(size=(4, 51)).astype(np.float32)
    assert np.array_equal(decode_array(encode_array(array)), array)


def marks(epochs: int, batches: int, step: float, wait: float) -> list[tuple[str, float]]:
    clock = 10.0
    stream = [("c", clock)]
    for _ in range(epochs):
        clock += 0.01
        stream.append(("i", clock))
        for _ in range(batches):
            clock += wait
            stream.append(("b", clock))
            clock += step
            stream.append(("s", clock))
        stream.append(("e", clock))
    return stream


def test_run_timing_reads_epochs_waits_and_first_batch_from_the_marks():
    timing = run_timing(marks(epochs=2, batches=10, step=0.012, wait=0.008))
    assert timing.first_batch_seconds == pytest.approx(0.018)
    assert [epoch.batches for epoch in timing.epochs] == [10, 10]
    assert timing.epochs[1].seconds == pytest.approx(0.2)
    assert timing.epochs[1].input_wait_seconds == pytest.approx(0.08)
    figures = pipeline_timing([timing, timing], warmup_epochs=1)
    assert figures.measured_epochs == 2
    assert figures.batches_per_second == pytest.approx(50.0)
    assert figures.input_wait_fraction == pytest.approx(0.4)
    with pytest.raises(MarksInvalid):
        run_timing([("c", 1.0), ("i", 1.1)])
    with pytest.raises(MarksInvalid):
        pipeline_timing([timing], warmup_epochs=2)


def test_an_epoch_ends_with_its_last_step_not_when_the_iterator_says_it_ran_out():
    stream = marks(epochs=1, batches=10, step=0.012, wait=0.008)
    ended = stream.pop()
    slow_to_end = [*stream, ("e", ended[1] + 0.14)]
    assert run_timing(slow_to_end).epochs[0].seconds == pytest.approx(run_timing([*stream, ended]).epochs[0].seconds)
    assert run_timing(slow_to_end).epochs[0].seconds == pytest.approx(0.2)
    one_batch = [("c", 1.0), ("i", 1.1), ("b", 1.2), ("s", 1.25), ("e", 1.4)]
    assert run_timing(one_batch).epochs[0].seconds == pytest.approx(0.15)


def test_speed_points_grow_linearly_up_to_the_capped_threshold():
    targets = {"no_credit_at_or_below": 1.0, "full_credit_at": 3.0, "expert_fraction": 0.8}
    # The expert reached 2.0x here, so full credit is at 1.6x.
    assert speed_points(1.0, 2.0, targets, 40) == 0
    assert speed_points(1.3, 2.0, targets, 40) == pytest.approx(20)
    assert speed_points(1.6, 2.0, targets, 40) == pytest.approx(40)
    assert speed_points(5.0, 2.0, targets, 40) == 40
    assert speed_points(0.5, 2.0, targets, 40) == 0
    # Where even the expert could not beat the naive pipeline, speed cannot be told apart.
    assert speed_points(1.0, 1.1, targets, 40) == 40
