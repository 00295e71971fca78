"""What users read: trec_eval's lines and JSON (:mod:`.text`), tables (:mod:`.tables`), plots
(:mod:`.plotting`) and the HTML report (:mod:`.html`).

The package is also the function that writes the HTML report: ``retrieval_eval.report(qrels, runs,
output="report.html")`` calls :func:`retrieval_eval.report.html.report` (the name that type checkers
see as a function). A module that is called: the package ``retrieval_eval.report`` and the public
function ``retrieval_eval.report`` share one name, and Python binds a subpackage's name in its parent
whenever the subpackage is imported, so the two could not be different objects.
"""

import sys as _sys
import types as _types
from typing import Any as _Any


class _CallablePackage(_types.ModuleType):
    def __call__(self, *args: _Any, **kwargs: _Any) -> _Any:
        from .html import report

        return report(*args, **kwargs)


_sys.modules[__name__].__class__ = _CallablePackage
#: retrieval_eval's lazy exports read the public name ``report`` here: the package itself.
report = _sys.modules[__name__]
