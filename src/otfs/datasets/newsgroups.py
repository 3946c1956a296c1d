"""``20newsgroups``: the six classic cross-subcategory text tasks of 20 Newsgroups (Dai et al. 2007).

One file of the dataset readers' folder (:data:`otfs.datasets.DATASET_READERS`).
"""

from __future__ import annotations

import tarfile
import zlib

import numpy as np

from otfs.datasets._readers import DATASET_READERS, DomainFeatures, check_param
from otfs.datasets._shift import ShiftFileError, ShiftReader, _existing

ARCHIVE = "20news-bydate.tar.gz"
SUBSETS = {"train": ("20news-bydate-train",), "test": ("20news-bydate-test",),
           "all": ("20news-bydate-train", "20news-bydate-test")}

#: The six tasks: the two top-level groups (the classes, in this order) and, for each domain, its
#: subcategories of each group. The split of Dai, Xue, Yang and Yu (2007, Table 1), as transcribed here.
TASKS = {
    "comp-vs-rec": (("comp", "rec"), {
        "source": (("comp.graphics", "comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware"),
                   ("rec.motorcycles", "rec.sport.hockey")),
        "target": (("comp.os.ms-windows.misc", "comp.windows.x"), ("rec.autos", "rec.sport.baseball"))}),
    "comp-vs-sci": (("comp", "sci"), {
        "source": (("comp.graphics", "comp.os.ms-windows.misc"), ("sci.crypt", "sci.electronics")),
        "target": (("comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware", "comp.windows.x"),
                   ("sci.med", "sci.space"))}),
    "comp-vs-talk": (("comp", "talk"), {
        "source": (("comp.graphics", "comp.sys.mac.hardware", "comp.windows.x"),
                   ("talk.politics.mideast", "talk.religion.misc")),
        "target": (("comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware"),
                   ("talk.politics.guns", "talk.politics.misc"))}),
    "rec-vs-sci": (("rec", "sci"), {
        "source": (("rec.autos", "rec.sport.baseball"), ("sci.med", "sci.space")),
        "target": (("rec.motorcycles", "rec.sport.hockey"), ("sci.crypt", "sci.electronics"))}),
    "rec-vs-talk": (("rec", "talk"), {
        "source": (("rec.autos", "rec.motorcycles"), ("talk.politics.guns", "talk.politics.misc")),
        "target": (("rec.sport.baseball", "rec.sport.hockey"), ("talk.politics.mideast", "talk.religion.misc"))}),
    "sci-vs-talk": (("sci", "talk"), {
        "source": (("sci.electronics", "sci.med"), ("talk.politics.misc", "talk.religion.misc")),
        "target": (("sci.crypt", "sci.space"), ("talk.politics.guns", "talk.politics.mideast"))}),
}


def read_messages(path, folders) -> dict[str, list[tuple[str, str]]]:
    """``{newsgroup: [(message id, text), ...]}`` of the archive's ``folders`` (sorted by id).

    The header block of each message (up to its first blank line: ``From:``,
    ``Subject:``, ``Newsgroups:``...) is removed, since it names the
    newsgroup; files that are not messages (``.DS_Store``) are skipped. A
    truncated or corrupt archive names the file.
    """
    path = _existing(path)
    groups: dict[str, list[tuple[str, str]]] = {}
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                parts = member.name.split("/")
                if not member.isfile() or len(parts) != 3 or parts[0] not in folders:
                    continue
                if parts[2].startswith(".") or not parts[2].isdigit():
                    continue
                raw = tar.extractfile(member).read().decode("latin-1")
                body = raw.partition("\n\n")[2]
                groups.setdefault(parts[1], []).append((f"{parts[0]}/{parts[1]}/{parts[2]}", body))
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ShiftFileError(f"{path}: cannot read the archive ({type(exc).__name__}: {exc}); the file is "
                             "truncated or corrupt") from exc
    for name in groups:
        groups[name].sort(key=lambda item: (item[0].split("/")[0], int(item[0].rsplit("/", 1)[1])))
    return groups


@DATASET_READERS.register("20newsgroups")
class Newsgroups(ShiftReader):
    """One of the six cross-subcategory tasks of 20 Newsgroups: two top-level groups, two domains.

    The classes are two top-level groups (e.g. ``comp`` and ``rec``); the
    ``source`` and ``target`` domains hold different subcategories of each
    (:data:`TASKS`, the split of Dai et al. 2007). The messages come from
    the ``20news-bydate`` archive, headers removed (they name the
    newsgroup). The vectoriser is part of the protocol and never sees a
    label: a tf-idf (scikit-learn's ``TfidfVectorizer``: lower-cased words
    of two or more letters, English stop words removed, sublinear tf,
    l2-normalised rows) whose vocabulary and idf are fitted on the messages
    of both domains of the task, unlabelled; it keeps the ``max_features``
    words of highest document frequency among those in at least ``min_df``
    messages. Both domains are read with the same vocabulary, so the
    features agree; the features' names are the words.

    Parameters
    ----------
    task : one of :data:`TASKS`, default="comp-vs-rec"
    subset : {"train", "test", "all"}, default="train"
        The part of the bydate archive read.
    max_features : int, default=1000
    min_df : int, default=3

    References
    ----------
    .. [1] W. Dai, G.-R. Xue, Q. Yang, Y. Yu. Co-clustering based Classification for Out-of-domain
       Documents. KDD 2007 (the subcategory split).
    .. [2] K. Lang. NewsWeeder: Learning to Filter Netnews. ICML 1995.
    """

    family = "20newsgroups"

    def __init__(self, task="comp-vs-rec", subset="train", max_features=1000, min_df=3):
        check_param("task", task, str, choices=list(TASKS))
        check_param("subset", subset, str, choices=list(SUBSETS))
        check_param("max_features", max_features, int, low=2)
        check_param("min_df", min_df, int, low=1)
        self.task, self.subset, self.max_features, self.min_df = task, subset, max_features, min_df
        self.domain_files = {d: [ARCHIVE] for d in ("source", "target")}

    @property
    def n_features(self):
        return self.max_features

    def _documents(self, groups, domain):
        classes, domains = TASKS[self.task]
        docs = []
        for label, subcats in enumerate(domains[domain], start=1):
            for sub in subcats:
                if sub not in groups:
                    raise ShiftFileError(f"{ARCHIVE}: newsgroup {sub!r} of task {self.task} not found "
                                         f"(found {sorted(groups)})")
                docs += [(ident, text, label) for ident, text in groups[sub]]
        return docs

    def read(self, domain, paths, manifest):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self._check_domain(domain)
        path = self._path(paths, domain)
        groups = read_messages(path, SUBSETS[self.subset])
        docs = {d: self._documents(groups, d) for d in ("source", "target")}
        vectoriser = TfidfVectorizer(lowercase=True, token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z]+\b",
                                     stop_words="english", sublinear_tf=True, min_df=self.min_df,
                                     max_features=self.max_features, dtype=np.float64)
        # Fitted on both domains' texts, unlabelled (the target labels are never read here).
        vectoriser.fit([text for d in ("source", "target") for _, text, _ in docs[d]])
        words = vectoriser.get_feature_names_out().tolist()
        if len(words) < self.max_features:
            raise ShiftFileError(f"{path}: task {self.task} has {len(words)} words in at least {self.min_df} "
                                 f"messages, fewer than max_features={self.max_features}")
        mine = docs[domain]
        X = vectoriser.transform([text for _, text, _ in mine]).toarray()
        y = np.array([label for *_, label in mine], dtype=np.int64)
        classes, domains = TASKS[self.task]
        info = {"task": self.task, "subset": self.subset, "subcategories": [list(s) for s in domains[domain]],
                "vectoriser": {"kind": "tfidf", "max_features": self.max_features, "min_df": self.min_df,
                               "fitted_on": "both domains, unlabelled"}}
        return DomainFeatures(X, y, list(classes), sample_ids=[i for i, *_ in mine], feature_names=words,
                              info=info)
