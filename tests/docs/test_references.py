"""The repository is readable on its own.

A clone has no ../shared: code and docs cite the kernel through docs/kfd-interface.md and the design
through docs/architecture.md, by heading anchor. Tests and test fixtures may still read ../shared
(through GPREEMPT_SHARED_DIR) and report themselves skipped without it.
"""
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Text that points outside the repository: the fixtures directory, the fact sheet and design notes
# kept there, the user's notes.
OUTSIDE = re.compile(r"\.\./shared|\bFACTS\b|\bDESIGN\.md\b|user-poc-analysis|\bcontext/(seeds|landscape)")

# Where such text is the point, with the reason. (path, substring the line must contain)
ALLOWED = {
    ("CMakeLists.txt", "set(GPREEMPT_SHARED_DIR"): "the fixtures' default location (build logic)",
    ("docs/testing.md", ""): "says where the tests find their fixtures",
}

# A citation of a doc's section: docs/<name>.md#anchor, or a relative link (<name>.md#anchor).
ANCHOR_CITE = re.compile(r"(?<![\w.-])((?:[\w./-]*/)?(kfd-interface|architecture)\.md)#([A-Za-z0-9_-]+)")

SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", "node_modules"}
SELF = "tests/docs/"


def source_files(root, include_tests):
    """(path relative to root, text) of every text file, build trees and VCS data left out."""
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIP_DIRS and not (rel_dir == Path(".") and d.startswith("build"))
            and not (rel_dir == Path(".") and d == "tests" and not include_tests))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # images and other binaries
            yield path.relative_to(root).as_posix(), text


def outside_references(root):
    """(path, line number, line) of every line outside tests/ that points outside the repository."""
    found = []
    for rel, text in source_files(root, include_tests=False):
        for n, line in enumerate(text.splitlines(), 1):
            if not OUTSIDE.search(line):
                continue
            if any(rel == path and needle in line for path, needle in ALLOWED):
                continue
            found.append((rel, n, line.strip()))
    return found


def slug(heading):
    """GitHub's anchor for a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(doc_text):
    seen = {}
    result = set()
    fenced = False
    for line in doc_text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        k = seen.get(base, 0)
        seen[base] = k + 1
        result.add(base if k == 0 else f"{base}-{k}")
    return result


def broken_anchors(root):
    """(path, line number, citation) of every cited docs/<name>.md#anchor that is not a heading."""
    docs = {}
    for name in ("kfd-interface", "architecture"):
        doc = root / "docs" / f"{name}.md"
        docs[name] = anchors(doc.read_text(encoding="utf-8")) if doc.is_file() else set()
    bad = []
    for rel, text in source_files(root, include_tests=True):
        if rel.startswith(SELF):
            continue  # the planted citations of the last test
        for n, line in enumerate(text.splitlines(), 1):
            for m in ANCHOR_CITE.finditer(line):
                if m.group(3) not in docs[m.group(2)]:
                    bad.append((rel, n, m.group(0)))
    return bad


def report(rows):
    return "\n".join(f"  {path}:{n}: {what}" for path, n, what in rows)


def test_nothing_outside_tests_points_outside_the_repository():
    rows = outside_references(ROOT)
    assert not rows, (
        "these lines cite files a clone does not have (../shared, FACTS, DESIGN.md, the user's "
        "notes); cite the "
        "section of docs/kfd-interface.md or docs/architecture.md instead:\n" + report(rows))


def test_every_cited_anchor_is_a_heading():
    rows = broken_anchors(ROOT)
    assert not rows, (
        "these citations name an anchor that no heading of the doc has (GitHub's anchor: the "
        "heading lower-cased, punctuation dropped, spaces as hyphens):\n" + report(rows))


def test_the_checks_find_what_they_look_for(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "kfd-interface.md").write_text(
        "# KFD\n## Suspend queues\n```\n# not a heading\n```\n## What a simulated KFD must reproduce\n")
    (tmp_path / "docs" / "architecture.md").write_text("# A\n## Layers\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "fixture.py").write_text("DIR = '../shared/realdata'\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.h").write_text(
        "// kernel rule (FACTS §8)\n"
        "// fine: docs/kfd-interface.md#suspend-queues, docs/architecture.md#layers\n"
        "// fine: [checklist](../docs/kfd-interface.md#what-a-simulated-kfd-must-reproduce)\n"
        "// broken: docs/kfd-interface.md#not-a-heading\n"
        "// see ../shared/DESIGN.md\n"
        "// thresholds (context: user-poc-analysis.md §1.3)\n")
    (tmp_path / "build-x").mkdir()
    (tmp_path / "build-x" / "gen.h").write_text("// FACTS\n")
    assert [(p, n) for p, n, _ in outside_references(tmp_path)] == [
        ("lib/a.h", 1), ("lib/a.h", 5), ("lib/a.h", 6)]
    assert [(p, n, c) for p, n, c in broken_anchors(tmp_path)] == [
        ("lib/a.h", 4, "docs/kfd-interface.md#not-a-heading")]
