# The bench's connection to a test root: Ansible's own local connection with every command run
# under chroot(8) and every file put or fetched below the root, the way community.general.chroot
# works (that collection is not part of Debian's ansible-core). The inventory host's name,
# ansible_host, is the root's path.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = """
    name: chroot
    short_description: run tasks inside a chroot directory (gpuprov bench)
    description:
        - ansible.builtin.local with commands run by chroot(8) in the directory named by the
          inventory host (ansible_host) and files transferred below it.
    extends_documentation_fragment:
        - connection_pipelining
"""

import os
import shlex
import shutil

from ansible.errors import AnsibleError
from ansible.plugins.connection.local import Connection as LocalConnection

ROOT_ENV = "env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8"


class Connection(LocalConnection):
    transport = "chroot"
    has_pipelining = True

    def _root(self):
        root = self._play_context.remote_addr
        if not root or not os.path.isdir(os.path.join(root, "usr", "bin")):
            raise AnsibleError("chroot connection: %r is not a root directory" % root)
        return root

    def _inside(self, path):
        return os.path.join(self._root(), path.lstrip("/"))

    def exec_command(self, cmd, in_data=None, sudoable=True):
        if not isinstance(cmd, str):
            cmd = cmd.decode()
        wrapped = "chroot %s %s /bin/sh -c %s" % (shlex.quote(self._root()), ROOT_ENV, shlex.quote(cmd))
        return super(Connection, self).exec_command(wrapped, in_data=in_data, sudoable=sudoable)

    def put_file(self, in_path, out_path):
        super(Connection, self).put_file(in_path, self._inside(out_path))

    def fetch_file(self, in_path, out_path):
        shutil.copyfile(self._inside(in_path), out_path)
