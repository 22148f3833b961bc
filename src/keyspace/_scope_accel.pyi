from collections.abc import Callable
from typing import TypeVar

from ._scope_fields import ScopeFields as ScopeFields

_T = TypeVar("_T")

def path_memo(name: str, fallback: Callable[..., _T], /) -> Callable[..., _T]: ...
