"""The documents' datasets, read from their standard files in a local folder; never a silent stand-in.

Each dataset is declared once (:data:`DATASETS`): its name, the folder and files its publisher
distributes, where it is published, and its loader. The folder is looked for under the data root: the
``--data DIR`` of ``theory reproduce`` (or the ``data=`` argument), else the environment variable
``THEORY_DATA``. Nothing is downloaded: a dataset that is not there raises :class:`DatasetMissing`, whose
message names the dataset, the folder and files looked for and where to get them; the checks turn it into
a skip with that message.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["DATA_ENV", "Dataset", "DATASETS", "DatasetMissing", "data_root", "dataset", "locate", "load",
           "available"]

#: the environment variable naming the data root
DATA_ENV = "THEORY_DATA"


class DatasetMissing(FileNotFoundError):
    """A dataset's files are not under the data root; the message says which and where they are published."""


@dataclasses.dataclass(frozen=True)
class Dataset:
    """One dataset of the documents.

    Attributes
    ----------
    name : str
        Its name here (``"cifar-10"``).
    title : str
        Its name and origin in words.
    folder : str
        The folder, under the data root, that holds it as its publisher distributes it.
    files : tuple of str
        Files (relative to ``folder``) whose presence means the dataset is there.
    published : str
        Where it is published (a URL, or who distributes it).
    loader : callable or None
        ``loader(folder, **options)``: the arrays (see each loader's docstring); None where no loader is
        provided (a dataset that is not public).
    """

    name: str
    title: str
    folder: str
    files: tuple[str, ...]
    published: str
    loader: Callable[..., Any] | None = None


DATASETS: dict[str, Dataset] = {}


def _declare(*args, **kwargs) -> Dataset:
    d = Dataset(*args, **kwargs)
    DATASETS[d.name] = d
    return d


def dataset(name: str) -> Dataset:
    """The declaration of dataset ``name``.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(sorted(DATASETS))}")
    return DATASETS[name]


def data_root(data: str | os.PathLike | None = None) -> Path | None:
    """The data root: ``data`` if given, else ``$THEORY_DATA``, else None."""
    if data is not None:
        return Path(data)
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else None


def locate(name: str, data: str | os.PathLike | None = None) -> Path:
    """The folder of dataset ``name`` under the data root, once its files are found there.

    Raises
    ------
    DatasetMissing
        When no data root is set or the files are not there; the message names the dataset, the files
        looked for and where the dataset is published.
    """
    d = dataset(name)
    root = data_root(data)
    where = (f"under {root}" if root is not None
             else f"(no data folder: pass --data DIR or set {DATA_ENV})")
    if root is not None:
        folder = root / d.folder
        missing = [f for f in d.files if not (folder / f).exists()]
        if not missing:
            return folder
        looked = f"{folder}: missing {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}"
    else:
        looked = where
    raise DatasetMissing(f"dataset {d.name} ({d.title}) not found {looked}; it is published at {d.published} "
                         f"(expected as {d.folder}/ with {', '.join(d.files[:3])}{' ...' if len(d.files) > 3 else ''})")


def available(name: str, data: str | os.PathLike | None = None) -> bool:
    """Whether dataset ``name`` is found under the data root."""
    try:
        locate(name, data)
    except DatasetMissing:
        return False
    return True


def load(name: str, data: str | os.PathLike | None = None, **options: Any) -> Any:
    """Dataset ``name`` read by its loader from the data root (``options`` go to the loader).

    Raises
    ------
    DatasetMissing
        When it is not there.
    ValueError
        When it has no loader (not public), or its files are not in the publisher's format.
    """
    folder = locate(name, data)
    d = dataset(name)
    if d.loader is None:
        raise ValueError(f"dataset {name} has no loader: {d.published}")
    return d.loader(folder, **options)


def _folder_text(value: Any) -> str:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise TypeError("a folder path (a non-empty string)")
    return value


def data_field(names: str, doc: str = "") -> Any:
    """The ``data`` field of an experiment config that reads dataset(s) ``names``: the data root (a folder
    path) or None for ``$THEORY_DATA``.

    ``theory reproduce --data DIR`` fills it; the experiment's measure passes it to :func:`load`.
    """
    from theory.experiments.config import Custom, OrNone, field

    rule = Custom(_folder_text, "a folder path", type_name="str", parse=str, invalid=[3, ""], scalar=True)
    return field(OrNone(rule, f"${DATA_ENV}"), None, doc or f"The data root holding {names} (None: ${DATA_ENV}).")
