"""The wrapper's one bounded cache: thread-safe, least recently used out first."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

#: entries kept (index-name resolutions with their shard routings: a few hundred bytes each)
CACHE_SIZE = 1024


class LRU:
    """A small thread-safe LRU map; bounded so a long-running app cannot grow it."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
            return None

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def pop(self, key: Any) -> None:
        with self._lock:
            self._data.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)
