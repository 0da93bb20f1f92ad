"""notebook_edit (files.md §6.7; statements 50-52)."""

from __future__ import annotations

import json

import nbformat

from .conftest import err


def _nb(minor=4, cells=None, **extra):
    nb = {"cells": cells if cells is not None else [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Título\n", "texto"]},
        {"cell_type": "code", "execution_count": 5, "metadata": {},
         "outputs": [{"name": "stdout", "output_type": "stream", "text": ["hi\n"]}],
         "source": ["print('hi')"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": minor, **extra}
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def _session(fs, files):
    s = fs(files)
    for name in files:
        s.call("read_file", path=name, limit=1)
    return s


def test_replace_clears_outputs_and_keeps_everything_else(fs):  # 50
    original = _nb(**{"x-custom": 1})
    s = _session(fs, {"n.ipynb": original})
    r = s.call("notebook_edit", path="n.ipynb", cell_number=1, new_source="print(1)\nprint(2)")
    assert r.text.splitlines()[0] == "replaced source of cell 1 in n.ipynb (2 cells)"
    text = s.read("n.ipynb").decode()
    nb = json.loads(text)
    before = json.loads(original)
    assert nb["x-custom"] == 1 and list(nb) == list(before)
    assert nb["cells"][0] == before["cells"][0]
    assert nb["cells"][1]["outputs"] == [] and nb["cells"][1]["execution_count"] is None
    assert nb["cells"][1]["source"] == ["print(1)\n", "print(2)"]
    assert "Título" in text and text.endswith("}\n") and text.split("\n")[1].startswith(' "')
    # valid, apart from what the original already had (the top-level "x-custom" key)
    assert _errors(nb) == _errors(before) == {"Additional properties are not allowed "
                                              "('x-custom' was unexpected)"}


def _errors(nb):
    return {e.message for e in nbformat.validator.iter_validate(nb)}


def test_insert_at_top_with_an_id_then_delete_restores(fs):  # 51
    original = _nb(minor=5, cells=[{"cell_type": "markdown", "id": "abc", "metadata": {},
                                    "source": ["x"]}])
    s = _session(fs, {"n.ipynb": original})
    r = s.call("notebook_edit", path="n.ipynb", edit_mode="insert", cell_number=-1,
               cell_type="markdown", new_source="new")
    assert r.text.splitlines()[0].startswith("inserted markdown cell at index 0 in n.ipynb "
                                             "(2 cells) (id \"")
    cell = json.loads(s.read("n.ipynb"))["cells"][0]
    assert len(cell["id"]) == 8 and all(c in "0123456789abcdef" for c in cell["id"])
    assert "outputs" not in cell and cell["source"] == ["new"]
    r = s.call("notebook_edit", path="n.ipynb", edit_mode="delete", cell_number=0)
    assert r.text.splitlines()[0].startswith("deleted cell 0 from n.ipynb (1 cells)")
    assert json.loads(s.read("n.ipynb"))["cells"] == json.loads(original)["cells"]


def test_bad_targets_and_non_notebooks(fs, unchanged):  # 52
    s = _session(fs, {"n.ipynb": _nb(), "e.ipynb": "{}\n"})
    before = unchanged(s.workspace, "n.ipynb", "e.ipynb")
    r = s.call("notebook_edit", path="n.ipynb", cell_number=5, new_source="x")
    assert err(r) == "FS_CELL_NOT_FOUND"
    assert r.text.startswith("FS_CELL_NOT_FOUND: cell_number 5 is out of range: n.ipynb has 2 "
                             "cells")
    r = s.call("notebook_edit", path="e.ipynb", cell_number=0, new_source="x")
    assert r.text.startswith("FS_NOT_NOTEBOOK: e.ipynb is not an nbformat 4 notebook (")
    assert err(s.call("notebook_edit", path="n.ipynb", cell_id="zzz", new_source="x")) == \
        "FS_CELL_NOT_FOUND"
    before.check()


def test_validators_and_invalid_results(fs, unchanged):
    s = _session(fs, {"n.ipynb": _nb()})
    bad = [{"edit_mode": "delete"}, {"cell_number": 0}, {"edit_mode": "insert", "cell_number": 0},
           {"cell_number": -1, "new_source": "x"}]
    for args in bad:
        r = s.call("notebook_edit", path="n.ipynb", **args)
        assert r.error.kind == "invalid_arguments", args
    nb = json.loads(_nb())
    nb["cells"][0]["attachments"] = {"a.png": {"image/png": "AAAA"}}
    s2 = _session(fs, {"m.ipynb": json.dumps(nb, indent=2) + "\n"})
    before = unchanged(s2.workspace, "m.ipynb")
    r = s2.call("notebook_edit", path="m.ipynb", cell_number=0, cell_type="code",
                new_source="x")
    assert err(r) == "FS_INVALID_NOTEBOOK"
    before.check()


def test_insert_code_after_a_cell_and_retype(fs):
    s = _session(fs, {"n.ipynb": _nb()})
    s.call("notebook_edit", path="n.ipynb", edit_mode="insert", cell_number=0, cell_type="code",
           new_source="")
    cells = json.loads(s.read("n.ipynb"))["cells"]
    assert cells[1]["cell_type"] == "code" and cells[1]["source"] == []
    assert cells[1]["outputs"] == [] and cells[1]["execution_count"] is None
    assert "id" not in cells[1]
    s.call("notebook_edit", path="n.ipynb", cell_number=2, cell_type="markdown", new_source="m")
    cell = json.loads(s.read("n.ipynb"))["cells"][2]
    assert cell["cell_type"] == "markdown" and "outputs" not in cell
    assert "execution_count" not in cell
