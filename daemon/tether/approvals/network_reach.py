"""How much network a command runs with, and whether a rule granted under one reach covers another.

Owns: `NetworkReach` (its stored text, the order `off` < `allowlist` to a subset of domains < `on`, its
words) and `CommandNetwork` (which reach the settings give a command).
Must not: decide (`gate.py`) or store rules.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False  # the command analysis is imported on a turn's first command
if TYPE_CHECKING:
    from .commands import ParsedCommand

__all__ = ["OFF", "CommandNetwork", "NetworkReach"]

_LEVELS = ("off", "allowlist", "on")


@dataclass(frozen=True, slots=True)
class NetworkReach:
    level: str  # "off" | "allowlist" (Tether's proxy to `domains`) | "on"
    domains: tuple[str, ...] = ()

    @classmethod
    def parse(cls, stored: str | None) -> NetworkReach:
        """From its stored text; none (a rule stored before rules had one) or anything
        unknown is "off", the strictest reading."""
        level, _, domains = (stored or "off").partition(" ")
        if level == "allowlist":
            return cls(level, tuple(domains.split()))
        return ON if level == "on" else OFF

    def stored(self) -> str:
        return " ".join((self.level, *self.domains)) if self.level == "allowlist" else self.level

    def within(self, granted: NetworkReach) -> bool:
        """This reach is no more network than `granted` allows."""
        if self.level == "allowlist" and granted.level == "allowlist":
            return set(self.domains) <= set(granted.domains)
        return _LEVELS.index(self.level) <= _LEVELS.index(granted.level)

    def words(self) -> str:
        if self.level == "on":
            return "with the network"
        if self.level == "allowlist":
            return f"with network only through Tether's proxy to {', '.join(self.domains) or 'no domain'}"
        return "with no network"


OFF = NetworkReach("off")
ON = NetworkReach("on")


class CommandNetwork:
    """The network settings: which commands get the network, and which the proxy to which domains."""

    def __init__(
        self,
        network_commands: tuple[str, ...],
        network_all: bool,
        network_proxy: bool,
        allowed_domains: tuple[str, ...],
    ) -> None:
        # list entries give the network; table entries ("prefix -> domains") the proxy
        self._network_commands = tuple(entry for entry in network_commands if " -> " not in entry)
        self._proxy_commands = [entry.partition(" -> ")[::2] for entry in network_commands if " -> " in entry]
        self._all = network_all
        self.proxy = network_proxy  # `allowlist`: a command without the network gets the proxy
        self._allowed_domains = allowed_domains

    def full(self, parsed: ParsedCommand) -> bool:
        """The command gets the network: the `network` setting, or `network_commands` covering every part."""
        from .commands import words_start_with

        if self._all:
            return True
        own = parsed.own_parts
        return (
            parsed.plain
            and bool(own)
            and all(any(words_start_with(part.texts, prefix) for prefix in self._network_commands) for part in own)
        )

    def domains(self, command: str) -> tuple[str, ...]:
        """The domains the table form of `network_commands` adds for `command` (every part
        of a plain command covered by a table entry), for the proxy in `allowlist` mode."""
        from .commands import parse_command, words_start_with

        parsed = parse_command(command)
        own = parsed.own_parts
        found: list[str] = []
        for part in own:
            covering = [domains for prefix, domains in self._proxy_commands if words_start_with(part.texts, prefix)]
            if not covering:
                return ()
            found += [domain for domains in covering for domain in domains.split()]
        return tuple(dict.fromkeys(found)) if parsed.plain and own else ()

    def reach(self, parsed: ParsedCommand, command: str, backend: str) -> NetworkReach:
        """What the command would run with, as a rule's condition compares it."""
        if self.full(parsed):
            return ON
        if self.proxy and backend == "bwrap":  # the proxy runs only under bubblewrap
            return NetworkReach("allowlist", tuple(dict.fromkeys((*self._allowed_domains, *self.domains(command)))))
        return OFF
