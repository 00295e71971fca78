"""The public path of the test assertions: :mod:`retrieval_eval.integrations.testing` holds them."""

from .integrations.testing import assert_at_least, assert_not_worse

__all__ = ["assert_at_least", "assert_not_worse"]
