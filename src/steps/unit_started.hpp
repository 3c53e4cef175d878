#pragma once
// When a running service last started, from systemd itself. A daemon that reads its
// configuration only at start (nvidia-imex and its node list) runs on the configuration it was
// started with; whether that is the file on disk now is judged by comparing the two times, so a
// kill between writing the file and restarting the daemon is seen on the next run.
#include <chrono>
#include <gpuprov/system.hpp>
#include <optional>
#include <string_view>

namespace gpuprov::steps {

/// `systemctl show -p ActiveState -p ActiveEnterTimestamp --timestamp=us+utc UNIT`'s
/// ActiveEnterTimestamp ("Sat 2026-12-05 09:00:00.123456 UTC", systemd's
/// format_timestamp_style TIMESTAMP_US_UTC, systemd 248 and newer) while the unit is active.
/// nullopt when it is not active, or when systemctl cannot say (older systemd refuses
/// --timestamp, no systemctl, not booted with systemd): callers then judge by files alone.
[[nodiscard]] std::optional<std::chrono::system_clock::time_point>
unit_active_since(const System& sys, std::string_view unit);

/// The timestamp part of the above; nullopt for "n/a", empty or another format.
[[nodiscard]] std::optional<std::chrono::system_clock::time_point>
parse_systemd_us_utc(std::string_view text);

} // namespace gpuprov::steps
