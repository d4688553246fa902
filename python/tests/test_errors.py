# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Bad input at run time: one line naming the problem, non-zero exit, no crash."""
import subprocess

import numpy as np
import pytest

import dyncc


def run(bin_dir, *args):
    proc = subprocess.run([bin_dir / "dyncc", "run", *map(str, args)],
                          capture_output=True, text=True)
    lines = proc.stderr.strip().splitlines()
    return proc.returncode, lines


def test_wrong_rank(tmp_path, bin_dir, example_artifact):
    np.save(tmp_path / "x.npy", np.ones((2, 64, 1), np.float32))
    rc, lines = run(bin_dir, example_artifact, "--input", f"X={tmp_path / 'x.npy'}")
    assert rc == 1
    assert len(lines) == 1
    assert lines[0].startswith("dyncc: error: input 'X': ")
    assert "rank 3, expected rank 2" in lines[0]


def test_wrong_static_dim(tmp_path, bin_dir, example_artifact):
    np.save(tmp_path / "x.npy", np.ones((2, 63), np.float32))
    rc, lines = run(bin_dir, example_artifact, "--input", f"X={tmp_path / 'x.npy'}")
    assert rc == 1
    assert lines == ["dyncc: error: input 'X' dimension 1: expected 64, got 63"]


def test_missing_input(bin_dir, example_artifact):
    rc, lines = run(bin_dir, example_artifact)
    assert rc == 1
    assert len(lines) == 1 and "no value for symbol 'B'" in lines[0]


def test_missing_input_file(tmp_path, bin_dir, example_artifact):
    rc, lines = run(bin_dir, example_artifact, "--input", f"X={tmp_path / 'nope.npy'}")
    assert rc == 1
    assert len(lines) == 1 and "nope.npy" in lines[0]


def test_unknown_input_name(tmp_path, bin_dir, example_artifact):
    np.save(tmp_path / "x.npy", np.ones((2, 64), np.float32))
    rc, lines = run(bin_dir, example_artifact, "--input", f"Z={tmp_path / 'x.npy'}")
    assert rc != 0
    assert len(lines) >= 1 and "'Z'" in lines[0]


def test_symbol_out_of_range(bin_dir, example_artifact):
    rc, lines = run(bin_dir, example_artifact, "--dim", "B=4097")
    assert rc == 1
    assert len(lines) == 1
    assert "B = 4097 is outside its range [1, 4096]" in lines[0]


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty"])
def test_corrupt_artifact(tmp_path, bin_dir, example_artifact, damage):
    data = bytearray(example_artifact.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 3]
    else:
        data = b""
    bad = tmp_path / "bad.dyncc"
    bad.write_bytes(bytes(data))
    rc, lines = run(bin_dir, bad, "--dim", "B=4")
    assert rc == 1
    assert len(lines) == 1 and "bad.dyncc" in lines[0], lines
    with pytest.raises(dyncc.DynccError):
        dyncc.load(bad)


def test_python_api_errors(example_artifact):
    sess = dyncc.load(example_artifact).session()
    with pytest.raises(dyncc.DynccError, match="expected rank 2, got 1"):
        sess.run({"X": np.ones(64, np.float32)})
    with pytest.raises(dyncc.DynccError, match="unknown input 'Q'"):
        sess.run({"Q": np.ones((1, 64), np.float32)})
    with pytest.raises(dyncc.DynccError):
        dyncc.load(example_artifact).session("cuda:0")
