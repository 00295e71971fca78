"""The readers of document and query texts (``report --docs`` and ``--topics``): formats, gzip,
bytes that are not UTF-8, and a ``path:line`` error for every line that cannot be read."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.io.texts import read_documents, read_topics
from retrieval_eval.model import InputFormatError


class TestDocuments:
    def test_tsv_keeps_only_wanted_documents(self, tmp_path: Path) -> None:
        path = tmp_path / "docs.tsv"
        path.write_text("docid\ttext\nd1\tone\ttab inside\nd2\ttwo\n\nd3\t  three  \n")
        assert read_documents(path, {"d1", "d3", "d9"}) == {"d1": "one tab inside", "d3": "three"}

    def test_jsonl_with_titles_and_ids_under_any_key(self, tmp_path: Path) -> None:
        path = tmp_path / "corpus.jsonl"
        path.write_text('{"_id": "a", "title": "T", "text": "body"}\n{"docid": 7, "text": "seven"}\n'
                        '{"id": "c", "text": ""}\n')
        assert read_documents(path, {"a", "7", "c"}) == {"a": "T — body", "7": "seven", "c": ""}

    def test_gzip_is_read_by_its_bytes(self, tmp_path: Path) -> None:
        path = tmp_path / "docs.data"
        path.write_bytes(gzip.compress(b'{"doc_id": "x", "text": "zipped"}\n'))
        assert read_documents(path, {"x"}) == {"x": "zipped"}

    def test_cut_and_bytes_that_are_not_utf8(self, tmp_path: Path) -> None:
        path = tmp_path / "docs.tsv"
        path.write_bytes(b"d\xff1\tab\xffcdefgh\n")
        assert read_documents(path, {"d\udcff1"}, chars=4) == {"d\udcff1": "ab\ufffdc…"}

    @pytest.mark.parametrize(("name", "content", "message"), [
        ("d.tsv", b"d1\tok\nno tab here\n", ("d.tsv:2: expected a document id, a tab and the document's text, "
                                             "found 'no tab here'")),
        ("d.tsv", b"d1\tok\nd1\tagain\n", "d.tsv:2: expected each document once, found 'd1' again (first on line 1)"),
        ("d.jsonl", b'{"text": "no id"}\n', ("d.jsonl:1: expected a document id in one of docid, doc_id, _id, id, "
                                             "found none")),
        ("d.jsonl", b'{"id": "a", "text": 3}\n', 'd.jsonl:1: expected "text" (and "title") to be strings, found 3'),
        ("d.jsonl", b'{"id": "a"}\n[1]\n', "d.jsonl:2: expected a JSON object, found [1]"),
        ("d.jsonl", b'{"id": "a"\n', "d.jsonl:1: expected a JSON object, found"),
    ])
    def test_errors_name_the_line(self, tmp_path: Path, name: str, content: bytes, message: str) -> None:
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(InputFormatError) as error:
            read_documents(path, {"a", "d1"})
        assert str(error.value).startswith(f"{path.parent}/{message}")

    @settings(max_examples=40, deadline=None)
    @given(st.dictionaries(st.text(st.characters(blacklist_characters="\t\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
                                                 blacklist_categories=("Cs",)), min_size=1, max_size=8).filter(
                               lambda i: i.strip() and i.lower() not in ("docid", "doc_id", "id", "_id", "qid",
                                                                         "query_id", "topic")),
                           st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)),
                                   max_size=30), max_size=6),
           st.integers(1, 40))
    def test_tsv_and_jsonl_read_the_same_texts(self, tmp_path_factory: pytest.TempPathFactory,
                                               docs: dict[str, str], chars: int) -> None:
        """Any ids and texts: both formats give each wanted text, on one line, cut at ``chars``."""
        import json

        folder = tmp_path_factory.mktemp("docs")
        (folder / "d.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in docs.items()), encoding="utf-8")
        (folder / "d.jsonl").write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in docs.items()),
                                        encoding="utf-8")
        wanted = set(list(docs)[::2])
        expected = {k: (" ".join(v.split())[:chars] + ("…" if len(" ".join(v.split())) > chars else ""))
                    for k, v in docs.items() if k in wanted}
        assert read_documents(folder / "d.tsv", wanted, chars=chars) == expected
        assert read_documents(folder / "d.jsonl", wanted, chars=chars) == expected

    def test_missing_file(self, tmp_path: Path) -> None:
        with pytest.raises(InputFormatError, match="cannot read it"):
            read_documents(tmp_path / "nope.tsv", set())


class TestTopics:
    def test_trec_topics(self, tmp_path: Path) -> None:
        path = tmp_path / "topics.301-302"
        path.write_text("<top>\n<num> Number: 301\n<title> International Organized Crime\n\n<desc> Description:\n"
                        "Identify organizations.\n<narr> Narrative:\nA relevant document...\n</top>\n\n"
                        "<top>\n<num> Number: 302 \n<title>Poliomyelitis\n</top>\n")
        assert read_topics(path) == {"301": ("International Organized Crime", "Identify organizations."),
                                     "302": ("Poliomyelitis", "")}

    def test_web_track_topics(self, tmp_path: Path) -> None:
        path = tmp_path / "wt.xml"
        path.write_text('<webtrack2009>\n<topic number="1" type="faceted">\n  <query>obama family tree</query>\n'
                        "  <description>Find information.</description>\n  <subtopic number=\"1\">x</subtopic>\n"
                        "</topic>\n</webtrack2009>\n")
        assert read_topics(path) == {"1": ("obama family tree", "Find information.")}

    def test_tsv_topics(self, tmp_path: Path) -> None:
        path = tmp_path / "queries.tsv"
        path.write_bytes(b"qid\tquery\nq1\tblack bear attacks\nq\xff2\tcaf\xe9\n")
        assert read_topics(path) == {"q1": ("black bear attacks", ""), "q\udcff2": ("caf\ufffd", "")}

    @pytest.mark.parametrize(("content", "message"), [
        (b"q1\tone\nq2 two\n", "t:2: expected a query id, a tab and the query's text, found 'q2 two'"),
        (b"q1\tone\nq1\tagain\n", "t:2: expected each query once, found 'q1' again (first on line 1)"),
        (b"<top>\n<num> Number: 1\n</top>\n<top>\n<title> no number\n</top>\n",
         "t:4: expected <num> in the topic that starts here"),
    ])
    def test_errors_name_the_line(self, tmp_path: Path, content: bytes, message: str) -> None:
        path = tmp_path / "t"
        path.write_bytes(content)
        with pytest.raises(InputFormatError) as error:
            read_topics(path)
        assert str(error.value).startswith(f"{path.parent}/{message}")
