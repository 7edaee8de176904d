"""A progress bar: tqdm when installed, else a plain one on stderr."""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator


class _Plain:
    def __init__(self, total: int, stream) -> None:
        self.total, self.n, self.desc, self.stream = total, 0, "", stream

    def _draw(self) -> None:
        width = 30
        done = width * self.n // max(1, self.total)
        self.stream.write("\r[%s%s] %d/%d %-40s" % ("#" * done, "." * (width - done), self.n, self.total, self.desc[:40]))
        self.stream.flush()

    def describe(self, desc: str) -> None:
        self.desc = desc
        self._draw()

    def update(self, n: int = 1) -> None:
        self.n += n
        self._draw()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


class _Tqdm:
    def __init__(self, total: int, stream) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=total, file=stream, unit="run", dynamic_ncols=True, leave=True)

    def describe(self, desc: str) -> None:
        self.bar.set_description_str(desc, refresh=False)

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()


class _Off:
    def describe(self, desc: str) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


@contextmanager
def progress(total: int, enabled: bool = True, stream=None) -> Iterator[object]:
    stream = stream or sys.stderr
    if not enabled:
        bar: object = _Off()
    else:
        try:
            bar = _Tqdm(total, stream)
        except ImportError:
            bar = _Plain(total, stream)
    try:
        yield bar
    finally:
        bar.close()  # type: ignore[attr-defined]
