"""Row ids: UUIDv7, unique, later ones sort later, and no two processes share random bits after a fork."""

import os
import time
import uuid

from services.orm import new_id


def test_ids_are_uuid7_unique_and_sort_by_time():
    first = [new_id() for _ in range(5000)]
    time.sleep(0.002)
    later = new_id()
    assert len(set(first)) == len(first)
    assert all(uuid.UUID(i).version == 7 and uuid.UUID(i).variant == uuid.RFC_4122 for i in first[:50])
    assert later > max(first)


def test_a_forked_process_makes_ids_of_its_own():
    new_id()  # the parent has random bytes waiting
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: what would the parent's next ids have been?
        os.write(write, ",".join(new_id()[-18:] for _ in range(3)).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 1000).decode().split(",")
    mine = [new_id()[-18:] for _ in range(3)]
    assert not set(child) & set(mine)
