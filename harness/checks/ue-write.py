#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Register a user event and write records to it, for the end-to-end checks.

    ue-write.py 'NAME u32 count; __data_loc char[] msg' count=1,msg=hi ...

Each record argument gives the field values, comma-separated; fields left
out are zero or empty.  Integer fields (s8..s64, u8..u64) and __data_loc /
__rel_loc char[] strings are supported.  Prints the indexes it got, then
one line per record written.
"""
import ctypes
import fcntl
import os
import struct
import sys

TRACEFS = os.environ.get('UE_TRACEFS', '/sys/kernel/tracing')
DIAG_IOCSREG = 0xc0082a00
COMMON_SIZE = 8             # common fields in front of the payload
INT_TYPES = {'s8': 'b', 'u8': 'B', 's16': 'h', 'u16': 'H',
             's32': 'i', 'u32': 'I', 's64': 'q', 'u64': 'Q'}


def parse_fields(command):
    """[(kind, name)] of the command's fields, kind a struct code or a loc."""
    _, _, rest = command.strip().partition(' ')
    fields = []
    for text in filter(None, (f.strip() for f in rest.split(';'))):
        words = text.split()
        if words[0] in ('__data_loc', '__rel_loc') and words[1] == 'char[]':
            fields.append((words[0], words[2]))
        elif words[0] in INT_TYPES:
            fields.append((INT_TYPES[words[0]], words[1]))
        else:
            sys.exit(f'ue-write.py: unsupported field: {text}')
    return fields


def payload(fields, values):
    """The payload bytes: fixed part, then the strings in field order."""
    fixed = sum(4 if kind.startswith('__') else struct.calcsize(kind)
                for kind, _ in fields)
    head, tail, offset = b'', b'', 0
    for kind, name in fields:
        if not kind.startswith('__'):
            head += struct.pack('=' + kind, int(values.get(name, 0), 0))
            continue
        data = values.get(name, '').encode() + b'\0'
        start = fixed + len(tail)
        if kind == '__data_loc':
            start += COMMON_SIZE
        else:
            start -= len(head) + 4
        head += struct.pack('=I', len(data) << 16 | start)
        tail += data
    return head + tail


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    command = sys.argv[1]
    fields = parse_fields(command)

    fd = os.open(TRACEFS + '/user_events_data', os.O_RDWR)
    name = ctypes.create_string_buffer(command.encode())
    reg = bytearray(struct.pack('=I4xQII', 24, ctypes.addressof(name), 0, 0))
    fcntl.ioctl(fd, DIAG_IOCSREG, reg, True)
    _, _, status_index, write_index = struct.unpack('=I4xQII', reg)
    print(f'status_index={status_index} write_index={write_index}',
          flush=True)

    for record in sys.argv[2:]:
        values = dict(kv.split('=', 1) for kv in record.split(',') if kv)
        written = os.writev(fd, [struct.pack('=I', write_index),
                                 payload(fields, values)])
        print(f'wrote {written} bytes: {record}', flush=True)
    os.close(fd)


if __name__ == '__main__':
    main()
