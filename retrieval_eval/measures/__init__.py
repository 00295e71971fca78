"""Measures: values such as ``P@10``, the registry of definitions and the string parser.

>>> from retrieval_eval.measures import AP, P, nDCG, parse
>>> str(nDCG @ 10), str(P(rel=2) @ 5), parse("MAP") == AP()
('nDCG@10', 'P(rel=2)@5', True)
"""

from __future__ import annotations

# Registration order is the order of the measures page and, after trec_eval's own, the print order:
# the family modules register as they are imported, so import sorting must not reorder this line.
# isort: off
from . import counts, precision, average_precision, graded, sets, judged, auc, diversity, cwl, preference, prefs  # noqa: F401
from . import judgment_groups  # noqa: F401  (-R qrels_jg)
# isort: on
from .gains import Gains
from .params import CUTOFF, REL, InvalidParameterError, MeasureError, Param, TrecName, UnknownMeasureError
from .parse import parse, parse_all, parse_labelled, parse_list, parse_trec_options
from .registry import (
    ALIAS_PARAMS,
    ALIASES,
    REGISTRY,
    TREC_NAMES,
    Measure,
    MeasureDef,
    compute,
    compute_text,
    measure,
    print_order,
)
from .trec_table import TREC_TABLE, TrecRow

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
infAP = REGISTRY["infAP"]
GMBpref = REGISTRY["GMBpref"]
RprecMult = REGISTRY["RprecMult"]
RelP = REGISTRY["RelP"]
Unj = REGISTRY["Unj"]
IPrecAvg = REGISTRY["IPrecAvg"]
BinG = REGISTRY["BinG"]
G = REGISTRY["G"]
DCG = REGISTRY["DCG"]
IDCG = REGISTRY["IDCG"]
nDCGRel = REGISTRY["nDCGRel"]
RnDCG = REGISTRY["RnDCG"]
RBP = REGISTRY["RBP"]
RBPResid = REGISTRY["RBPResid"]
YAAP = REGISTRY["YAAP"]
Utility = REGISTRY["Utility"]
SetP = REGISTRY["SetP"]
SetR = REGISTRY["SetR"]
SetAP = REGISTRY["SetAP"]
SetF = REGISTRY["SetF"]
NumNonRelJudgedRet = REGISTRY["NumNonRelJudgedRet"]
RelString = REGISTRY["RelString"]
ERR = REGISTRY["ERR"]
Judged = REGISTRY["Judged"]
F1 = REGISTRY["F1"]
AUC = REGISTRY["AUC"]
GAUC = REGISTRY["GAUC"]
PooledAUC = REGISTRY["PooledAUC"]
alpha_DCG = REGISTRY["alpha_DCG"]
alpha_nDCG = REGISTRY["alpha_nDCG"]
ERR_IA = REGISTRY["ERR_IA"]
nERR_IA = REGISTRY["nERR_IA"]
NRBP = REGISTRY["NRBP"]
nNRBP = REGISTRY["nNRBP"]
P_IA = REGISTRY["P_IA"]
StRecall = REGISTRY["StRecall"]
AP_IA = REGISTRY["AP_IA"]
SDCG = REGISTRY["SDCG"]
NERR8 = REGISTRY["NERR8"]
NERR9 = REGISTRY["NERR9"]
NERR10 = REGISTRY["NERR10"]
NERR11 = REGISTRY["NERR11"]
INST = REGISTRY["INST"]
INSQ = REGISTRY["INSQ"]
BPM = REGISTRY["BPM"]
Compat = REGISTRY["Compat"]
Accuracy = REGISTRY["Accuracy"]
AP_avgjg = REGISTRY["AP_avgjg"]
P_avgjg = REGISTRY["P_avgjg"]
RprecMult_avgjg = REGISTRY["RprecMult_avgjg"]
PrefsPossible = REGISTRY["PrefsPossible"]
PrefsFulfilled = REGISTRY["PrefsFulfilled"]
PrefsFulfilledRet = REGISTRY["PrefsFulfilledRet"]
PrefsSimp = REGISTRY["PrefsSimp"]
PrefsPair = REGISTRY["PrefsPair"]
PrefsAvgJg = REGISTRY["PrefsAvgJg"]
PrefsAvgJgRnonrel = REGISTRY["PrefsAvgJgRnonrel"]
PrefsSimpRet = REGISTRY["PrefsSimpRet"]
PrefsPairRet = REGISTRY["PrefsPairRet"]
PrefsAvgJgRet = REGISTRY["PrefsAvgJgRet"]
PrefsAvgJgRnonrelRet = REGISTRY["PrefsAvgJgRnonrelRet"]
PrefsSimpImp = REGISTRY["PrefsSimpImp"]
PrefsPairImp = REGISTRY["PrefsPairImp"]
PrefsAvgJgImp = REGISTRY["PrefsAvgJgImp"]

__all__ = [
    "ALIASES",
    "ALIAS_PARAMS",
    "AP",
    "AP_IA",
    "AUC",
    "BPM",
    "CUTOFF",
    "DCG",
    "ERR",
    "ERR_IA",
    "F1",
    "GAUC",
    "GMAP",
    "IDCG",
    "INSQ",
    "INST",
    "NERR8",
    "NERR9",
    "NERR10",
    "NERR11",
    "NRBP",
    "P_IA",
    "RBP",
    "REGISTRY",
    "REL",
    "RR",
    "SDCG",
    "TREC_NAMES",
    "TREC_TABLE",
    "YAAP",
    "AP_avgjg",
    "Accuracy",
    "BinG",
    "Bpref",
    "Compat",
    "G",
    "GMBpref",
    "Gains",
    "IPrec",
    "IPrecAvg",
    "InvalidParameterError",
    "Judged",
    "Measure",
    "MeasureDef",
    "MeasureError",
    "NumNonRelJudgedRet",
    "NumQ",
    "NumRel",
    "NumRelRet",
    "NumRet",
    "P",
    "P_avgjg",
    "Param",
    "PooledAUC",
    "PrefsAvgJg",
    "PrefsAvgJgImp",
    "PrefsAvgJgRet",
    "PrefsAvgJgRnonrel",
    "PrefsAvgJgRnonrelRet",
    "PrefsFulfilled",
    "PrefsFulfilledRet",
    "PrefsPair",
    "PrefsPairImp",
    "PrefsPairRet",
    "PrefsPossible",
    "PrefsSimp",
    "PrefsSimpImp",
    "PrefsSimpRet",
    "R",
    "RBPResid",
    "RelP",
    "RelString",
    "RnDCG",
    "Rprec",
    "RprecMult",
    "RprecMult_avgjg",
    "SetAP",
    "SetF",
    "SetP",
    "SetR",
    "StRecall",
    "Success",
    "TrecName",
    "TrecRow",
    "Unj",
    "UnknownMeasureError",
    "Utility",
    "alpha_DCG",
    "alpha_nDCG",
    "compute",
    "compute_text",
    "infAP",
    "measure",
    "nDCG",
    "nDCGRel",
    "nERR_IA",
    "nNRBP",
    "parse",
    "parse_all",
    "parse_labelled",
    "parse_list",
    "parse_trec_options",
    "print_order",
]
