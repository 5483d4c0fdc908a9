"""The transfer engine's pure parts: part sizes, one-pass hashing, the layout cache, the meter, the download
journal, the CLI's size option and the progress bar's ETA."""

from __future__ import annotations

import argparse
import hashlib
import io
import os
from pathlib import Path

import pytest

from arca_client import transfer
from arca_client.commands.transfer import byte_size
from arca_client.errors import ArcaError
from arca_client.progress import ProgressBar

MIB = 1024**2


def test_the_default_part_size_is_8_mib_and_grows_to_stay_within_10000_parts() -> None:
    assert transfer.choose_part_size(100 * MIB) == 8 * MIB
    hundred_gb = 100 * 1000**3
    size = transfer.choose_part_size(hundred_gb)
    assert size % MIB == 0 and -(-hundred_gb // size) <= transfer.MAX_PARTS
    assert -(-hundred_gb // (size - MIB)) > transfer.MAX_PARTS  # the smallest MiB multiple that fits


def test_a_requested_part_size_is_checked_against_s3s_rules() -> None:
    assert transfer.choose_part_size(1000, 1000) == 1000  # an only part may be small
    with pytest.raises(ArcaError):
        transfer.choose_part_size(20 * MIB, 4 * MIB)  # more than one part under 5 MiB
    with pytest.raises(ArcaError):
        transfer.choose_part_size(6 * 1024**3, 6 * 1024**3)  # over 5 GiB
    with pytest.raises(ArcaError):
        transfer.choose_part_size(10_001 * 5 * MIB, 5 * MIB)  # over 10,000 parts


def test_one_pass_gives_the_whole_sha256_and_each_parts() -> None:
    data = os.urandom(3 * 1000 + 17)
    layout = transfer.hash_layout(transfer.Reader(io.BytesIO(data)), len(data), 1000)
    assert layout.sha256 == hashlib.sha256(data).hexdigest()
    assert layout.parts == [hashlib.sha256(data[i : i + 1000]).hexdigest() for i in range(0, len(data), 1000)]
    assert (layout.span(1), layout.span(4)) == ((0, 1000), (3000, 17))


def test_a_stream_is_read_from_its_start_offset(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"headerBODY")
    with open(path, "rb") as stream:
        assert transfer.Reader(stream, 6).read_at(0, 4) == b"BODY"


def test_the_layout_cache_serves_the_same_file_and_forgets_a_changed_one(tmp_path: Path) -> None:
    # Given a file whose layout was saved
    cache = transfer.StateCache({"ARCA_CACHE_DIR": str(tmp_path / "cache")})
    source = tmp_path / "model.bin"
    source.write_bytes(b"x" * 10)
    layout = transfer.Layout("a" * 64, 10, 10, ["b" * 64])
    cache.save_layout(source, layout)
    # Then the same file and part size find it; another part size does not
    assert cache.layout(source, 10) == layout
    assert cache.layout(source, 5) is None
    # When the file changes, the layout is not served
    source.write_bytes(b"y" * 11)
    assert cache.layout(source, 10) is None


def test_the_meter_counts_a_part_sent_again_once() -> None:
    seen: list[int] = []
    meter = transfer.Meter("upload", 100, lambda _phase, done, _total: seen.append(done), base=40)
    meter.set(1, 20)
    meter.set(1, 0)  # a retry starts the part again
    meter.set(1, 30)
    assert seen == [40, 60, 40, 70]


def test_a_journal_of_other_content_starts_the_partial_download_over(tmp_path: Path) -> None:
    # Given a partial download of one content, with part 1 recorded
    dest = tmp_path / "out.bin"
    first = transfer._Partial(dest, "a" * 64, 10, 5)
    first.record(1)
    first.close()
    assert transfer._Partial(dest, "a" * 64, 10, 5).done == {1}
    # When another content is downloaded to the same path, nothing of the first counts as done
    assert transfer._Partial(dest, "b" * 64, 10, 5).done == set()


def test_part_sizes_are_read_in_binary_units() -> None:
    assert [byte_size(t) for t in ("8MiB", "16M", "1GiB", "5242880", "0")] == [8 * MIB, 16 * MIB, 1024**3, 5 * MIB, 0]
    with pytest.raises(argparse.ArgumentTypeError):
        byte_size("8 parsecs")


def test_the_progress_bar_shows_the_rate_since_the_phase_began_and_an_eta() -> None:
    # Given an upload resumed at half of 100 MiB
    now = [0.0]
    out = io.StringIO()
    bar = ProgressBar(out, clock=lambda: now[0], interval=0)
    bar("upload", 50 * MIB, 100 * MIB)
    # When 10 MiB more go in 1 s
    now[0] = 1.0
    bar("upload", 60 * MIB, 100 * MIB)
    # Then the rate counts this run's bytes only, and 40 MiB at 10 MiB/s is 4 s away
    assert "10.0 MiB/s  ETA 0:00:04" in out.getvalue()
