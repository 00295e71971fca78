"""trec_eval's measure table: the order it prints measures in, its groups and its default cutoffs."""

from __future__ import annotations

#: trec_eval's default cutoffs for P, recall, map_cut, ndcg_cut and relative_P.
P_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: trec_eval's default recall points for iprec_at_recall (0.0, 0.1, ..., 1.0).
RECALL_POINTS = tuple(i / 10 for i in range(11))
#: trec_eval's default cutoffs for success.
SUCCESS_CUTOFFS = (1, 5, 10)
#: trec_eval's default multiples of R for Rprec_mult (literal doubles, as in its source).
RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
#: trec_eval's default cutoffs for unj.
UNJ_CUTOFFS = (5, 10, 20)

#: trec_eval's fixed print order (its measure table), whatever the order of ``-m`` flags.
TREC_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
    "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut",
    "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "yaap", "rbp", "rbp_resid", "unj",
)
#: trec_eval's default measure set (``runid`` is printed around it by the CLI).
OFFICIAL = (
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P",
)
#: trec_eval's ``-m all_trec`` set.
ALL_TREC = (
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility",
    "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P",
    "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
    "rbp", "rbp_resid", "unj",
)
#: trec_eval's ``-m set`` group: the measures of an unranked set of documents.
SET = (
    "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall", "set_relative_P",
    "set_map", "set_F",
)
GROUPS = {"official": OFFICIAL, "all_trec": ALL_TREC, "set": SET}
