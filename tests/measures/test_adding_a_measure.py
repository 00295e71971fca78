"""Adding a trec_eval measure takes one decorated kernel plus one row of trec_eval's table, nothing else.

A throwaway measure is registered here, for the length of one test, and must then reach everything
that lists or parses measures: ``-m`` (by its name and through its group), ``retrieval-eval
measures``, the generated docs page, print order, and the completeness check, which must notice that
it still lacks its evidence.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import test_completeness

from retrieval_eval.cli import main
from retrieval_eval.engine.batch import RankedBatch
from retrieval_eval.measures import REL, TrecName, measure, parse, parse_all, trec_table
from retrieval_eval.measures import registry as registry_tables
from retrieval_eval.measures.describe import listing, reference_page

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n"
RUN = "q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq2 Q0 x 1 1.0 r\nq2 Q0 c 2 0.5 r\n"


@pytest.fixture
def registry() -> Iterator[None]:
    """Put the registry back as it was once the test is done."""
    saved = [(table, dict(table)) for table in (registry_tables.REGISTRY, registry_tables.ALIASES, registry_tables.ALIAS_PARAMS, registry_tables.TREC_NAMES)]
    yield
    for table, content in saved:
        table.clear()
        table.update(content)


def register_throwaway(monkeypatch: pytest.MonkeyPatch, *, with_row: bool = True) -> None:
    """The two edits a contributor makes: the kernel with its metadata, and the table row."""

    @measure("Throwaway", params={"rel": REL}, trec=(TrecName("throwaway"),))
    def throwaway(b: RankedBatch, *, rel: int) -> np.ndarray:
        """Relevant documents retrieved, per document retrieved plus one: nrr / (n + 1).

        A measure that exists only in this test. An empty ranking gives 0.
        Reference: none.
        """
        return b.n_relevant_retrieved(rel) / (b.num_ret + 1.0)

    if with_row:
        row = trec_table.TrecRow("throwaway", ("all_trec",))
        rows = list(trec_table.TREC_TABLE)
        rows.insert(trec_table.print_position("map") + 1, row)  # printed right after map
        monkeypatch.setattr(trec_table, "TREC_TABLE", tuple(rows))


@pytest.mark.usefixtures("registry")
def test_a_new_measure_reaches_every_listing(monkeypatch: pytest.MonkeyPatch, write, capsys) -> None:
    register_throwaway(monkeypatch)
    qrels, run = write("qrels", QRELS), write("run", RUN)

    assert str(parse("Throwaway")) == "Throwaway" and [str(m) for m in parse_all("throwaway")] == ["Throwaway"]
    assert main(["evaluate", "-q", "-m", "throwaway", qrels, run]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split() for line in out] == [["throwaway", "q1", "0.3333"], ["throwaway", "q2", "0.3333"],
                                              ["throwaway", "all", "0.3333"]]

    # Through its group, in the place its row gives it.
    assert main(["evaluate", "-m", "all_trec", qrels, run]) == 0
    labels = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert labels[labels.index("map") + 1] == "throwaway"

    assert main(["measures"]) == 0
    assert "Throwaway\n    Relevant documents retrieved, per document retrieved" in capsys.readouterr().out
    assert "\n## Throwaway\n" in reference_page() and "Throwaway" in listing()

    # The completeness check sees it, and says what it still lacks.
    missing = test_completeness.missing_evidence("Throwaway")
    assert "a hand-computed case" in missing
    assert not any("TREC_TABLE" in item for item in missing)


@pytest.mark.usefixtures("registry")
def test_a_trec_name_without_a_table_row_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    register_throwaway(monkeypatch, with_row=False)
    assert "a row for 'throwaway' in trec_table.TREC_TABLE" in test_completeness.missing_evidence("Throwaway")
    with pytest.raises(ValueError, match="no row in trec_table.TREC_TABLE"):
        trec_table.print_position("throwaway")
