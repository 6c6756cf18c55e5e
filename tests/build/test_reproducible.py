"""Two clean builds of the same sources, in two directories, give byte-identical sites.

The slow test copies the working tree twice (directories of different names
and depths, so a leaked absolute path would show), runs ``make build`` in
each with the same ``SOURCE_DATE_EPOCH``, and compares the two
``_build/html`` trees file by file; a difference is reported with the file
and its first differing line. The fast tests check that report.
"""

from __future__ import annotations

import pytest

from tools import ROOT, SITE, workcopy


@pytest.mark.slow
def test_two_clean_builds_are_byte_identical(tmp_path):
    first = workcopy.copy_tree(ROOT, tmp_path / "first")
    second = workcopy.copy_tree(ROOT, tmp_path / "another" / "directory")
    for copy in (first, second):
        result = workcopy.build(copy)
        assert result.ok, result.log[-3000:]
    site_a, site_b = first / SITE, second / SITE
    assert (site_a / "index.html").is_file()
    assert workcopy.differences(site_a, site_b) == []


def test_a_difference_names_the_file_and_first_differing_line(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for site, date in ((a, "Jan 01"), (b, "Feb 02")):
        (site / "book").mkdir(parents=True)
        (site / "book" / "page.html").write_text(f"<html>\n<p>same</p>\n<p>{date}</p>\n</html>\n")
        (site / "same.css").write_text("p {}\n")
    (b / "extra.png").write_bytes(b"\x89PNG")
    found = workcopy.differences(a, b)
    assert found == [f"only in {b}: extra.png",
                     "book/page.html: line 3: '<p>Jan 01</p>' != '<p>Feb 02</p>'"]


def test_identical_trees_have_no_difference(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "image.png").write_bytes(bytes(range(256)))
    assert workcopy.differences(tmp_path / "a", tmp_path / "b") == []
    (tmp_path / "b" / "image.png").write_bytes(bytes(range(255)) + b"\x00")
    assert workcopy.differences(tmp_path / "a", tmp_path / "b") == [
        "image.png: binary files differ from byte 255"]
