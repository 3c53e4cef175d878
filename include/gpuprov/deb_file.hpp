#pragma once
// Files inside a .deb, read without installing or extracting it: `dpkg-deb --fsys-tarfile`
// prints the package's data as one uncompressed tar stream, which gpuprov reads itself. The plan
// uses it for what NVIDIA's pinning package would put in /etc/apt/preferences.d/, so apt's
// simulation of the driver transaction sees the very pin the host will get.
#include <gpuprov/system.hpp>
#include <map>
#include <string>
#include <string_view>

namespace gpuprov {

/// Regular files of a tar stream (POSIX ustar, GNU long names, pax `path` records) whose path,
/// without a leading "./", starts with `dir` ("etc/apt/preferences.d/"): path -> content.
/// Throws Error on a stream that is cut short or whose header is not tar's.
[[nodiscard]] std::map<std::string, std::string> tar_files_under(std::string_view tar,
                                                                 std::string_view dir);

/// The dpkg-deb command that prints a package file's data tar stream.
[[nodiscard]] Command deb_fsys_tarfile_command(const std::string& deb_path);

/// Regular files a .deb installs under `dir` (see tar_files_under); throws CommandError when
/// dpkg-deb cannot read the file, Error when its output is not a tar stream.
[[nodiscard]] std::map<std::string, std::string>
deb_files_under(const System& sys, const std::string& deb_path, std::string_view dir);

} // namespace gpuprov
