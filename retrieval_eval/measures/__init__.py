"""Measures: values such as ``P@10``, the registry of definitions and the string parser.

>>> from retrieval_eval.measures import AP, P, nDCG, parse
>>> str(nDCG @ 10), str(P(rel=2) @ 5), parse("MAP") == AP()
('nDCG@10', 'P(rel=2)@5', True)
"""

from __future__ import annotations

from . import catalog
from .base import (
    ALIASES,
    REGISTRY,
    TREC_NAMES,
    TREC_ORDER,
    Measure,
    MeasureDef,
    Param,
    TrecName,
    UnknownMeasureError,
    compute,
    measure,
    print_order,
)
from .parse import ALL_TREC, GROUPS, OFFICIAL, parse, parse_all

# The registered definitions under their canonical names, for ``AP @ 10`` style use.
NumQ = REGISTRY["NumQ"]
NumRet = REGISTRY["NumRet"]
NumRel = REGISTRY["NumRel"]
NumRelRet = REGISTRY["NumRelRet"]
AP = REGISTRY["AP"]
GMAP = REGISTRY["GMAP"]
Rprec = REGISTRY["Rprec"]
Bpref = REGISTRY["Bpref"]
RR = REGISTRY["RR"]
IPrec = REGISTRY["IPrec"]
P = REGISTRY["P"]
R = REGISTRY["R"]
nDCG = REGISTRY["nDCG"]
Success = REGISTRY["Success"]

__all__ = [
    "ALIASES", "ALL_TREC", "AP", "Bpref", "GMAP", "GROUPS", "IPrec", "Measure", "MeasureDef", "NumQ",
    "NumRel", "NumRelRet", "NumRet", "OFFICIAL", "P", "Param", "R", "REGISTRY", "RR", "Rprec",
    "Success", "TREC_NAMES", "TREC_ORDER", "TrecName", "UnknownMeasureError", "catalog", "compute",
    "measure", "nDCG", "parse", "parse_all", "print_order",
]
