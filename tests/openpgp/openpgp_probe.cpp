// Test driver for the OpenPGP oracle (check_with_gpg.sh): runs each file through gpuprov's own
// key parser, parse_openpgp_key, and prints one tab-separated line per file:
//     PATH <TAB> key <TAB> FINGERPRINT <TAB> USER-IDS
//     PATH <TAB> refused <TAB> WHY
// so a script can compare it with `gpg --show-keys --with-colons`. Not installed, never run by
// gpuprov itself.
#include <fstream>
#include <gpuprov/repo.hpp>
#include <iostream>
#include <iterator>
#include <string>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: openpgp_probe FILE...\n";
        return 2;
    }
    int status = 0;
    for (int i = 1; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        if (!in) {
            std::cerr << "openpgp_probe: cannot read " << argv[i] << "\n";
            status = 2;
            continue;
        }
        const std::string data((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        const auto r = gpuprov::parse_openpgp_key(data);
        std::string why = r.error;
        for (auto& c : why) {
            if (c == '\t' || c == '\n') {
                c = ' ';
            }
        }
        if (r.key) {
            std::cout << argv[i] << "\tkey\t" << r.key->fingerprint << "\t"
                      << r.key->user_ids.size() << "\n";
        } else {
            std::cout << argv[i] << "\trefused\t" << why << "\n";
        }
    }
    return status;
}
