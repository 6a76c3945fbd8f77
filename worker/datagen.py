"""Deterministic input data for pipeline exercises, generated once per worker and reused read-only.

Each exercise's `spec.data` names a generator and its parameters. `exercise_data_ensure` makes the
data for one spec (keyed by a digest of the spec and the generator version) in a child
interpreter, under a lock, atomically:

    inputs/<key>/              what the learner's pipeline reads (TFRecord shards, or the
                               simulator's arrays)
    answers/<key>/expected.npz what the right answer looks like, example by example, in file
                               order: `signatures` (one row per example, see worker.checks),
                               `labels`, `shards`, and for exercises with a random left-right flip,
                               `flipped_signatures`
    answers/<key>/expected-<split>.npz
                               for exercises over several splits (training and validation),
                               each further split's expected examples
    answers/<key>/manifest.json the generator, the file names in order, the example count and,
                               for exercises over records that do not parse, where each bad
                               record is and what is wrong with it; for several splits, each
                               further split's files and example count

Only `inputs/` is ever shown to a sandbox: the expected signatures stay with the host, and reach
the grading process only after the learner's code has finished producing its output.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Bump when a generator's output changes, so that cached data is made again.
GENERATOR_VERSION = 3
JPEG_QUALITY = 90
PROJECT_ROOT = Path(__file__).resolve().parent.parent


class DataGenerationFailed(RuntimeError):
    """The generator process failed; the message carries its error output."""


@dataclass(frozen=True)
class ExerciseData:
    key: str
    inputs: Path
    answers: Path

    def manifest(self) -> dict[str, Any]:
        manifest: dict[str, Any] = json.loads((self.answers / "manifest.json").read_text())
        return manifest


def data_key(slug: str, data_spec: Mapping[str, Any], rules: Mapping[str, Any]) -> str:
    described = json.dumps(
        {"data": data_spec, "resize": rules.get("resize"), "version": GENERATOR_VERSION}, sort_keys=True
    )
    return f"{slug}-{hashlib.sha256(described.encode()).hexdigest()[:16]}"


def exercise_data_ensure(data_root: Path, slug: str, spec: Mapping[str, Any]) -> ExerciseData:
    """This exercise's data, generated first if no worker has made it yet."""
    key = data_key(slug, spec["data"], spec.get("rules", {}))
    data = ExerciseData(key, data_root / "inputs" / key, data_root / "answers" / key)
    if (data.answers / "manifest.json").exists():
        return data
    for directory in (data.inputs.parent, data.answers.parent):
        directory.mkdir(parents=True, exist_ok=True)
    with _locked(data_root / f".{key}.lock"):
        if (data.answers / "manifest.json").exists():
            return data
        staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=data_root))
        try:
            completed = subprocess.run(  # noqa: S603 - our own interpreter and module
                [sys.executable, "-m", "worker.datagen", str(staging)],
                input=json.dumps(dict(spec)).encode(),
                capture_output=True,
                cwd=PROJECT_ROOT,
                env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""},
                timeout=600,
                check=False,
            )
            if completed.returncode != 0:
                raise DataGenerationFailed(completed.stderr.decode(errors="replace")[-4000:])
            for path in [staging, *staging.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
            shutil.rmtree(data.inputs, ignore_errors=True)  # left by a generation that was cut short
            (staging / "files").rename(data.inputs)
            staging.rename(data.answers)  # last: the manifest says the data is complete
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return data


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def generate(spec: Mapping[str, Any], output: Path) -> None:
    """Write files/, expected.npz and manifest.json for one exercise spec (runs with TensorFlow)."""
    import numpy as np

    from worker.checks import example_signature

    data = spec["data"]
    rules = spec.get("rules", {})
    files_dir = output / "files"
    files_dir.mkdir(parents=True)
    rng = np.random.default_rng(int(data["seed"]))
    generator = data["generator"]
    bad_records: list[dict[str, Any]] = []
    if generator == "tfrecord_jpeg_images":
        files, values, labels, shards = _jpeg_shards(data, rules, rng, files_dir)
    elif generator == "tfrecord_feature_vectors":
        files, values, labels, shards, bad_records = _feature_shards(data, rng, files_dir)
    elif generator == "python_simulator":
        files, values, labels, shards = _simulator_arrays(data, rng, files_dir)
    elif generator == "tfrecord_feature_splits":
        splits = _feature_splits(data, rng, files_dir)
        files, values, labels, shards = splits.pop("train")
    else:
        raise ValueError(f"unknown data generator {generator!r}")

    def answer(values: Any, labels: Any, shards: Any) -> dict[str, Any]:
        return {
            "signatures": np.stack([example_signature(value) for value in values]),
            "labels": labels.astype(np.int64),
            "shards": shards.astype(np.int32),
        }

    expected = answer(values, labels, shards)
    if rules.get("augmentation") == "random_flip_left_right":
        expected["flipped_signatures"] = np.stack([example_signature(value[:, ::-1]) for value in values])
    np.savez(output / "expected.npz", **expected)
    manifest = {"generator": generator, "files": files, "examples": len(labels), "version": GENERATOR_VERSION}
    if bad_records:
        manifest["bad_records"] = bad_records
    if data.get("merged_shards"):
        manifest["merged_files"] = [f"merged-{index:05d}.tfrecord" for index in range(int(data["merged_shards"]))]
    if generator == "tfrecord_feature_splits":
        manifest["splits"] = {}
        for name, (split_files, split_values, split_labels, split_shards) in splits.items():
            np.savez(output / f"expected-{name}.npz", **answer(split_values, split_labels, split_shards))
            manifest["splits"][name] = {"files": split_files, "examples": len(split_labels)}
    (output / "manifest.json").write_text(json.dumps(manifest, indent=2))


def _jpeg_shards(data: Mapping[str, Any], rules: Mapping[str, Any], rng: Any, files_dir: Path) -> tuple[Any, ...]:
    import numpy as np
    import tensorflow as tf

    height, width = data["image_size"]
    per_shard, shard_count = int(data["examples_per_shard"]), int(data["shards"])
    files, values, labels, shards = [], [], [], []
    for shard in range(shard_count):
        name = f"shard-{shard:05d}-of-{shard_count:05d}.tfrecord"
        files.append(name)
        with tf.io.TFRecordWriter(str(files_dir / name)) as writer:
            for _ in range(per_shard):
                label = int(rng.integers(0, int(data["num_classes"])))
                pixels = _smooth_image(rng, height, width)
                encoded = tf.io.encode_jpeg(pixels, quality=JPEG_QUALITY).numpy()
                writer.write(_example({"image": _bytes_feature(encoded), "label": _int_feature(label)}))
                # The expected image is what decoding gives back, not the pixels before encoding.
                image = tf.cast(tf.io.decode_jpeg(encoded, channels=3), tf.float32) / 255.0
                resize = rules.get("resize")
                if resize:
                    image = tf.image.resize(image, resize["size"], method=resize.get("method", "bilinear"))
                values.append(image.numpy())
                labels.append(label)
                shards.append(shard)
    return files, values, np.array(labels), np.array(shards)


def _smooth_image(rng: Any, height: int, width: int) -> Any:
    """A colourful image with large smooth areas: distinct per example, and small as a JPEG."""
    import numpy as np
    import tensorflow as tf

    coarse = rng.uniform(0, 255, size=(1, 6, 6, 3)).astype(np.float32)
    image = tf.image.resize(coarse, (height, width), method="bicubic")[0].numpy()
    image += rng.normal(0, 6, size=image.shape)  # some texture, so blurring an image changes it
    return np.clip(np.round(image), 0, 255).astype(np.uint8)


def _feature_shards(data: Mapping[str, Any], rng: Any, files_dir: Path) -> tuple[Any, ...]:
    """Shards of (features, label) examples, or (features, id) with `ids`; with `bad_records` (kind:
    count), that many records that must not reach the output are spread among them at random (see
    worker.observation_rules.BAD_RECORD_KINDS) and listed in the manifest; the expected examples are
    the good ones only."""
    import numpy as np
    import tensorflow as tf

    from worker.observation_rules import BAD_RECORD_KINDS

    per_shard, shard_count = int(data["examples_per_shard"]), int(data["shards"])
    dimension = int(data["feature_dim"])
    pattern = data.get("file_name_pattern", "train-{index:05d}.tfrecord")
    bad_kinds = [kind for kind, count in dict(data.get("bad_records") or {}).items() for _ in range(int(count))]
    unknown = set(bad_kinds) - set(BAD_RECORD_KINDS)
    if unknown:
        raise ValueError(f"unknown bad record kinds: {sorted(unknown)}")
    total = per_shard * shard_count + len(bad_kinds)
    bad_at: dict[int, str] = {}
    if bad_kinds:  # no draw without them, so that other exercises' data stays as it was
        positions = sorted(rng.choice(total, size=len(bad_kinds), replace=False).tolist())
        bad_at = dict(zip(positions, [bad_kinds[index] for index in rng.permutation(len(bad_kinds))], strict=True))
    files: list[str] = []
    values: list[Any] = []
    labels: list[int] = []
    shards: list[int] = []
    bad: list[dict[str, Any]] = []
    position = 0
    for shard in range(shard_count):
        name = pattern.format(index=shard)
        files.append(name)
        with tf.io.TFRecordWriter(str(files_dir / name)) as writer:
            written = 0
            good = 0
            while good < per_shard or (shard == shard_count - 1 and position < total):
                if position in bad_at:
                    writer.write(_bad_record(bad_at[position], rng, dimension))
                    bad.append({"file": name, "record": written, "kind": bad_at[position]})
                else:
                    features = rng.normal(0, 1, size=dimension).astype(np.float32)
                    feature_list = tf.train.Feature(float_list=tf.train.FloatList(value=features.tolist()))
                    if data.get("ids"):
                        # The record's id, its place among the good records, stands where a label would.
                        label = len(labels)
                        writer.write(_example({"features": feature_list, "id": _int_feature(label)}))
                    else:
                        label = int(rng.integers(0, int(data["num_classes"])))
                        writer.write(_example({"features": feature_list, "label": _int_feature(label)}))
                    values.append(features)
                    labels.append(label)
                    shards.append(shard)
                    good += 1
                position += 1
                written += 1
    merged = int(data.get("merged_shards", 0))
    if merged:
        # The same records again in fewer, larger files (fewer files than workers, for sharding).
        per_merged = shard_count // merged
        for index in range(merged):
            with tf.io.TFRecordWriter(str(files_dir / f"merged-{index:05d}.tfrecord")) as writer:
                for name in files[index * per_merged : (index + 1) * per_merged]:
                    for record in tf.data.TFRecordDataset(str(files_dir / name)):
                        writer.write(record.numpy())
    return files, values, np.array(labels), np.array(shards), bad


def _bad_record(kind: str, rng: Any, dimension: int) -> bytes:
    import numpy as np
    import tensorflow as tf

    def floats(count: int) -> Any:
        values = rng.normal(0, 1, size=count).astype(np.float32).tolist()
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))

    if kind == "not_an_example":
        # A protocol buffer field with wire type 7, which does not exist: no parser accepts it.
        return b"\xff" + bytes(rng.integers(0, 256, size=int(rng.integers(20, 120)), dtype=np.uint8))
    if kind == "missing_label":
        return _example({"features": floats(dimension)})
    if kind == "wrong_feature_count":
        return _example({"features": floats(dimension + int(rng.choice([-1, 1]))), "label": _int_feature(1)})
    return _example({"features": floats(dimension), "label": floats(1)})


def _feature_splits(data: Mapping[str, Any], rng: Any, files_dir: Path) -> dict[str, tuple[Any, ...]]:
    """A training split and validation splits of (features, label) records, each feature on its own
    scale; the expected examples of every split are its features normalized with the mean and the
    population standard deviation of the training split's features (float64, then float32)."""
    import numpy as np
    import tensorflow as tf

    dimension = int(data["feature_dim"])
    means = rng.uniform(-4.0, 4.0, size=dimension)
    deviations = rng.uniform(0.5, 3.0, size=dimension)
    train = data["train"]
    raw: dict[str, tuple[list[Any], list[Any], Any, Any]] = {}

    def write(name: str, count: int, shift: float, scale: float) -> tuple[Any, Any]:
        features = (means + deviations * (shift + scale * rng.normal(0, 1, size=(count, dimension)))).astype(np.float32)
        labels = rng.integers(0, int(data["num_classes"]), size=count)
        with tf.io.TFRecordWriter(str(files_dir / name)) as writer:
            for row, label in zip(features, labels, strict=True):
                feature_list = tf.train.Feature(float_list=tf.train.FloatList(value=row.tolist()))
                writer.write(_example({"features": feature_list, "label": _int_feature(int(label))}))
        return features, labels

    shard_count, per_shard = int(train["shards"]), int(train["examples_per_shard"])
    parts = [write(f"train-{shard:05d}.tfrecord", per_shard, 0.0, 1.0) for shard in range(shard_count)]
    train_features = np.concatenate([features for features, _ in parts])
    raw["train"] = (
        [f"train-{shard:05d}.tfrecord" for shard in range(shard_count)],
        list(train_features),
        np.concatenate([labels for _, labels in parts]),
        np.repeat(np.arange(shard_count), per_shard),
    )
    for name in ("validation", "validation_changed"):
        split = data[name]
        file_name = f"{name.replace('_', '-')}-00000.tfrecord"
        features, labels = write(file_name, int(split["examples"]), float(split["shift"]), float(split["scale"]))
        raw[name] = ([file_name], list(features), labels, np.zeros(len(labels)))
    mean = train_features.astype(np.float64).mean(axis=0)
    deviation = train_features.astype(np.float64).std(axis=0)
    return {
        name: (files, [((value - mean) / deviation).astype(np.float32) for value in values], labels, shards)
        for name, (files, values, labels, shards) in raw.items()
    }


def _simulator_arrays(data: Mapping[str, Any], rng: Any, files_dir: Path) -> tuple[Any, ...]:
    import numpy as np

    count = int(data["num_samples"])
    observations = rng.normal(0, 1, size=(count, *data["observation_shape"])).astype(np.float32)
    labels = rng.integers(0, int(data["num_classes"]), size=count).astype(np.int64)
    np.save(files_dir / "observations.npy", observations)
    np.save(files_dir / "labels.npy", labels)
    return ["observations.npy", "labels.npy"], list(observations), labels, np.zeros(count)


def _example(features: dict[str, Any]) -> bytes:
    import tensorflow as tf

    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def _bytes_feature(value: bytes) -> Any:
    import tensorflow as tf

    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _int_feature(value: int) -> Any:
    import tensorflow as tf

    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


if __name__ == "__main__":
    generate(json.loads(sys.stdin.read()), Path(sys.argv[1]))
