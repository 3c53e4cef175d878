#!/usr/bin/env bash
# A throwaway CA and a server certificate for IP 127.0.0.1, valid 2 days, into DIR (created).
# Made on every run, also when the rest of the mirror comes from the cache (lib/mirror.sh): a
# cached certificate would expire under a cache that outlives it.
# usage: mirror/tls.sh DIR
set -euo pipefail
dir=${1:?usage: tls.sh DIR}
mkdir -p "$dir"
cd "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -sha256 \
    -subj '/CN=gpuprov e2e throwaway CA' \
    -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -sha256 -subj '/CN=127.0.0.1' 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' >ext.cnf
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
    -sha256 -extfile ext.cnf 2>/dev/null
rm -f server.csr ext.cnf ca.srl
