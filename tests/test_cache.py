"""Cache keys: stable for equal inputs, different for any changed input."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from builders import cache, gem5, patches


def test_key_ignores_dict_order() -> None:
    assert cache.key_of({"a": 1, "b": [1, 2]}) == cache.key_of({"b": [1, 2], "a": 1})


def test_key_changes_with_any_value() -> None:
    base = {"version": "v24.0.0.1", "patches": [["0001-x.patch", "aa"]]}
    changed = {"version": "v24.0.0.1", "patches": [["0001-x.patch", "ab"]]}
    assert cache.key_of(base) != cache.key_of(changed)


def test_cache_root_follows_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    assert cache.cache_root() == (tmp_path / "c").resolve()
    monkeypatch.delenv(cache.CACHE_ENV)
    assert cache.cache_root() == Path.home() / ".cache" / "arm-hardening-gem5"


def test_staging_publishes_only_complete_entries(tmp_path: Path) -> None:
    entry = cache.entry("thing", {"x": 1}, tmp_path)
    with pytest.raises(RuntimeError):
        with entry.staging({"x": 1}) as out:
            (out / "half").write_text("written")
            raise RuntimeError("build failed")
    assert not entry.exists()
    assert list((tmp_path / "thing").iterdir()) == []
    with entry.staging({"x": 1}) as out:
        (out / "whole").write_text("written")
    assert entry.exists()
    assert entry.manifest()["inputs"] == {"x": 1}


def _series_dir(tmp_path: Path, body: bytes) -> Path:
    patch_dir = tmp_path / "patches"
    patch_dir.mkdir(exist_ok=True)
    (patch_dir / "0001-change.patch").write_bytes(body)
    (patch_dir / "series").write_text("# comment\n0001-change.patch\n\n")
    return patch_dir


def test_gem5_key_follows_patch_contents(tmp_path: Path) -> None:
    options = gem5.Gem5BuildOptions()
    first = cache.key_of(gem5.build_inputs(_series_dir(tmp_path, b"one"), options))
    second = cache.key_of(gem5.build_inputs(_series_dir(tmp_path, b"two"), options))
    again = cache.key_of(gem5.build_inputs(_series_dir(tmp_path, b"two"), options))
    assert first != second
    assert second == again


def test_gem5_key_follows_build_options(tmp_path: Path) -> None:
    patch_dir = _series_dir(tmp_path, b"one")
    default = gem5.build_inputs(patch_dir, gem5.Gem5BuildOptions())
    fast = gem5.build_inputs(patch_dir, gem5.Gem5BuildOptions(variant="fast"))
    assert cache.key_of(default) != cache.key_of(fast)
    # The opt build's inputs are those every committed result was keyed by.
    assert default["options"] == {"isa": "ARM", "variant": "opt",
                                  "kconfig": {"RUBY": "n", "USE_SYSTEMC": "n", "USE_KVM": "n"}}
    assert gem5.Gem5BuildOptions(variant="fast").binary == "gem5.fast"
    with pytest.raises(ValueError, match="valid: opt, fast"):
        gem5.Gem5BuildOptions(variant="debug")


def test_series_names_a_missing_patch(tmp_path: Path) -> None:
    (tmp_path / "series").write_text("0001-missing.patch\n")
    with pytest.raises(FileNotFoundError, match="0001-missing.patch"):
        gem5.build_inputs(tmp_path, gem5.Gem5BuildOptions())


def test_tree_digest_sees_renames(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("x")
    before = cache.tree_digest(tmp_path)
    os.rename(tmp_path / "a", tmp_path / "b")
    assert cache.tree_digest(tmp_path) != before


def test_stale_partial_entries_are_removed(tmp_path: Path) -> None:
    entry = cache.entry("thing", {"x": 2}, tmp_path)
    stale = tmp_path / "thing" / f".{entry.key}.partial-999999999"
    stale.mkdir(parents=True)
    with entry.staging({"x": 2}) as out:
        (out / "f").write_text("x")
    assert not stale.exists() and entry.exists()


def test_tree_digest_can_leave_out_paths(tmp_path: Path) -> None:
    (tmp_path / "cores").mkdir()
    (tmp_path / "board.py").write_text("a")
    (tmp_path / "cores" / "a76.py").write_text("b")
    before = cache.tree_digest(tmp_path, ("cores/",))
    (tmp_path / "cores" / "a76.py").write_text("c")
    assert cache.tree_digest(tmp_path, ("cores/",)) == before
    assert cache.tree_digest(tmp_path) != before


def test_code_digest_ignores_documentation_but_not_code(tmp_path: Path) -> None:
    source = tmp_path / "model.py"
    source.write_text('"""A model."""\n\n\ndef size() -> int:\n    """Bytes."""\n    return 4  # L1\n')
    before = cache.code_digest(source)
    source.write_text('"""A model (source: TRM)."""\ndef size() -> int:\n'
                      '    """Bytes, from the TRM."""\n    return 4\n')
    assert cache.code_digest(source) == before
    source.write_text('"""A model."""\ndef size() -> int:\n    return 8\n')
    assert cache.code_digest(source) != before


def test_code_digest_reads_other_files_as_bytes(tmp_path: Path) -> None:
    data = tmp_path / "table.toml"
    data.write_text("a = 1\n")
    before = cache.code_digest(data)
    data.write_text("a = 1 # note\n")
    assert cache.code_digest(data) != before


def test_truncated_or_edited_entries_are_not_used(tmp_path: Path) -> None:
    entry = cache.entry("thing", {"x": 3}, tmp_path)
    with entry.staging({"x": 3}) as out:
        (out / "sub").mkdir()
        (out / "sub" / "image").write_text("the whole image\n")
    assert entry.exists() and entry.usable()
    assert entry.manifest()["files"]["sub/image"]["size"] == 16
    # Truncated: the cheap check already refuses it.
    (entry.path / "sub" / "image").write_text("the whole")
    assert not entry.exists()
    # Edited, same size: the checksum refuses it, and the entry is removed.
    (entry.path / "sub" / "image").write_text("THE WHOLE IMAGE\n")
    assert entry.exists() and entry.damage() == ["sub/image"]
    assert not entry.usable()
    assert not entry.path.exists()


def test_code_text_keeps_what_strings_hold() -> None:
    # Blank lines and trailing spaces inside a string literal are data (a boot
    # script, say); around code they are layout.
    first = cache.python_code('S = """a\nb\n"""\n')
    assert cache.python_code('S = """a\n\n\nb   \n"""\n') != first
    assert cache.python_code('\n\nS = """a\nb\n"""   # why\n\n') == first


def test_ensure_builds_a_missing_entry_once(tmp_path: Path) -> None:
    entry = cache.entry("thing", {"x": 1}, tmp_path)
    builds: list[str] = []

    def build() -> None:
        builds.append("built")
        with entry.staging({"x": 1}) as out:
            (out / "made").write_text("once")

    assert cache.ensure(entry, "thing", build) == entry
    assert cache.ensure(entry, "thing", build) == entry
    assert builds == ["built"]
    assert (entry.path / "made").read_text() == "once"


def test_ensure_skips_the_build_when_it_appeared_while_waiting(tmp_path: Path) -> None:
    """A builder that waited for the work tree finds the entry its holder made."""
    entry = cache.entry("thing", {"x": 1}, tmp_path)
    workspace = tmp_path / "tree.lock"
    builds: list[str] = []
    with cache.locked(workspace):
        waiter = threading.Thread(target=cache.ensure, args=(
            entry, "thing", lambda: builds.append("built twice"), workspace))
        waiter.start()
        time.sleep(3 * cache.LOCK_POLL_SECONDS)
        assert waiter.is_alive()
        with entry.staging({"x": 1}) as out:
            (out / "made").write_text("by the holder")
    waiter.join(timeout=30)
    assert not waiter.is_alive() and builds == []
    assert (entry.path / "made").read_text() == "by the holder"


def test_series_id_is_what_sha256sum_gives(tmp_path: Path) -> None:
    patch_dir = _series_dir(tmp_path, b"one")
    (patch_dir / "0002-more.patch").write_bytes(b"two")
    (patch_dir / "series").write_text("0001-change.patch\n# between\n  0002-more.patch  # why\n")
    series = patches.read_series(patch_dir)
    # The pipeline experiments/README.md gives for checking the column by hand.
    expected = subprocess.run(["bash", "-c", "sed 's/#.*//' series | xargs sha256sum | sha256sum"],
                              cwd=patch_dir, check=True, capture_output=True,
                              text=True).stdout[:8]
    assert patches.series_id([(p.name, p.digest()) for p in series]) == f"0001-0002:{expected}"
    assert patches.series_id([]) == ""
