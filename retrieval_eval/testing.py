"""The public path of the test assertions: :mod:`retrieval_eval.integrations.testing` holds them."""

from .integrations.testing import (
    assert_at_least,
    assert_fact,
    assert_not_worse,
    assert_passes_rules,
    expectation_params,
    rules_of,
)

__all__ = ["assert_at_least", "assert_fact", "assert_not_worse", "assert_passes_rules", "expectation_params",
           "rules_of"]
