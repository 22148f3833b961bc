"""etcd users, roles and key permissions (the ``Auth`` service): :class:`EtcdAccess`.

Bytes and names only, like every store module: which ranges a role gets is decided
above (``keyspace.access``). Every call goes through the connection's retry loop
and error translation; the calls that change users and roles need root
credentials once auth is enabled (etcd refuses them otherwise:
:class:`~keyspace.errors.AccessDenied`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import StoreError
from ._proto import watch_auth_pb2 as wa
from ._rpc import EtcdConnection

__all__ = ["EtcdAccess", "Permission"]


@dataclass(frozen=True, order=True)
class Permission:
    """A role's permission on the etcd keys ``[key, range_end)`` (``range_end``
    empty: the one key ``key``); ``write`` false means read-only."""

    key: bytes
    range_end: bytes
    read: bool = True
    write: bool = True


def _perm_type(p: Permission) -> int:
    if p.read and p.write:
        return int(wa.Permission.READWRITE)
    return int(wa.Permission.WRITE if p.write else wa.Permission.READ)


class EtcdAccess:
    """Users, roles and permissions of the cluster behind ``conn``."""

    def permission(self, key: bytes, range_end: bytes, *, write: bool = True) -> Permission:
        """A read (and, with ``write``, write) permission on ``[key, range_end)``."""
        return Permission(key, range_end, read=True, write=write)

    def __init__(self, conn: EtcdConnection) -> None:
        self._conn = conn

    def _call(self, what: str, method: str, request: object) -> object:
        return self._conn.call(what, getattr(self._conn.auth, method), request)

    def _exists(self, what: str, method: str, request: object) -> object | None:
        """The answer, or ``None`` when etcd says the user or role does not exist."""
        try:
            return self._call(what, method, request)
        except StoreError as exc:
            if "not found" in str(exc):
                return None
            raise

    def enable(self, root_password: str) -> None:
        """Turn authentication on: create ``root`` (with ``root_password``) and its
        ``root`` role when missing, then enable auth. Once on, every client needs
        credentials."""
        self.ensure_user("root", root_password)
        self.ensure_role("root")
        self._call("auth: grant root", "UserGrantRole", wa.AuthUserGrantRoleRequest(user="root", role="root"))
        self._call("auth: enable", "AuthEnable", wa.AuthEnableRequest())

    def disable(self) -> None:
        self._call("auth: disable", "AuthDisable", wa.AuthDisableRequest())

    def ensure_user(self, name: str, password: str | None) -> bool:
        """Create user ``name`` unless it exists; True when created. A new user needs
        a password (``ValueError`` without one)."""
        if self._exists("auth: get user", "UserGet", wa.AuthUserGetRequest(name=name)) is not None:
            return False
        if not password:
            raise ValueError(f"etcd user {name!r} does not exist; give a password to create it")
        self._call("auth: add user", "UserAdd", wa.AuthUserAddRequest(name=name, password=password))
        return True

    def delete_user(self, name: str) -> None:
        if self._exists("auth: get user", "UserGet", wa.AuthUserGetRequest(name=name)) is not None:
            self._call("auth: delete user", "UserDelete", wa.AuthUserDeleteRequest(name=name))

    def user_roles(self, name: str) -> list[str] | None:
        """The roles bound to user ``name``; ``None`` when there is no such user."""
        found = self._exists("auth: get user", "UserGet", wa.AuthUserGetRequest(name=name))
        return None if found is None else [str(r) for r in found.roles]  # type: ignore[attr-defined]

    def ensure_role(self, name: str) -> bool:
        """Create role ``name`` unless it exists; True when created."""
        if self.permissions(name) is not None:
            return False
        self._call("auth: add role", "RoleAdd", wa.AuthRoleAddRequest(name=name))
        return True

    def delete_role(self, name: str) -> None:
        if self.permissions(name) is not None:
            self._call("auth: delete role", "RoleDelete", wa.AuthRoleDeleteRequest(role=name))

    def permissions(self, role: str) -> list[Permission] | None:
        """The key permissions of ``role``, sorted; ``None`` when there is no such role."""
        found = self._exists("auth: get role", "RoleGet", wa.AuthRoleGetRequest(role=role))
        if found is None:
            return None
        out = []
        for p in found.perm:  # type: ignore[attr-defined]
            kind = int(p.permType)
            out.append(
                Permission(
                    bytes(p.key),
                    bytes(p.range_end),
                    read=kind != wa.Permission.WRITE,
                    write=kind != wa.Permission.READ,
                )
            )
        return sorted(out)

    def grant(self, role: str, permission: Permission) -> None:
        """Give ``role`` the permission (etcd replaces one with the same range)."""
        perm = wa.Permission(
            permType=_perm_type(permission),  # type: ignore[arg-type]
            key=permission.key,
            range_end=permission.range_end,
        )
        self._call(
            "auth: grant permission",
            "RoleGrantPermission",
            wa.AuthRoleGrantPermissionRequest(name=role, perm=perm),
        )

    def revoke(self, role: str, key: bytes, range_end: bytes) -> None:
        """Take the permission on exactly ``[key, range_end)`` from ``role``."""
        self._call(
            "auth: revoke permission",
            "RoleRevokePermission",
            wa.AuthRoleRevokePermissionRequest(role=role, key=key, range_end=range_end),
        )

    def bind(self, user: str, role: str) -> None:
        self._call("auth: grant role", "UserGrantRole", wa.AuthUserGrantRoleRequest(user=user, role=role))

    def unbind(self, user: str, role: str) -> None:
        self._call("auth: revoke role", "UserRevokeRole", wa.AuthUserRevokeRoleRequest(name=user, role=role))
