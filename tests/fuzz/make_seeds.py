#!/usr/bin/env python3
"""Writes the binary seeds of four fuzz targets: corpus/vipu_reply (V-IPU replies, encoded by protoc from the
text below), corpus/runtime_frame (runtime protocol streams), corpus/agent_session (scripts of connection
events for the agent) and corpus/worker_command (command lines, NUL-separated). The other targets' seeds are
text files kept as they are. Run from anywhere; rewrites only the files it names."""
import pathlib
import struct
import subprocess

here = pathlib.Path(__file__).resolve().parent
repo = here.parent.parent

# --- V-IPU replies: (file, message type, text format), as vipu-sim answers for a 16-IPU pod.
IPU = "ipus {{ ipulink_domain_topology_id: {ild} ipulink_domain_routing_id: 0 topology_id: {t} routing_id: {r} }}"
PARTITION = """partitions {{
  id: "{id}"
  spec {{ cluster_id: "pod16" {ipus} ipulink_routing_type: IRT_DNC sync_type: ST_POD_NATIVE_DEFAULT num_gcds: 1
         num_ipulink_segments: 1 reconfigurable: false gw_routing_type: GRT_RING num_replicas: 1 allocation_id: "ml-team" }}
  ready_state: {state}
  ipuof_server_version: "2.6.0"
}}"""
replies = [
    ("list-partitions.bin", "ListPartitionsReply",
     PARTITION.format(id="ipujob-ml-team-bert-x7k2p-0", state="PS_ACTIVE",
                      ipus=" ".join(IPU.format(ild=0, t=t, r=t) for t in range(4))) + "\n" +
     PARTITION.format(id="ipujob-vision-resnet50-dp-1", state="PS_PENDING",
                      ipus=" ".join(IPU.format(ild=1, t=t, r=t) for t in range(2)))),
    ("list-partitions-empty.bin", "ListPartitionsReply", ""),
    ("ipu-attributes.bin", "ListIPUAttributesReply", """
entries { agent: "ipum-0" ipu_attributes { key: 0 value { attributes { key: "ipu_arch" value: "ipu2" }
                                                          attributes { key: "serial" value: "0042.0001.8211721" } } }
                          ipu_attributes { key: 1 value { attributes { key: "ipu_arch" value: "ipu2" } } } }
entries { agent: "ipum-1" }"""),
    ("ipuof-config.bin", "GetPartitionIpuofConfigReply", """
ipuof_config { ipulink_routing_type: IRT_DNC sync_type: ST_POD_NATIVE_DEFAULT reconfigurable: false gw_routing_type: GRT_RING
  num_ipulink_segments: 1 ipuof_server_version: "2.6.0"
  gcd_configs {
    devices { ip: "192.0.2.1" server_port: 50052 rdma_port: 50053 device_id: 0 ipulink_segment_id: 0 routing_id: 0 ipu_arch_id: 1
              ipu_id: 0 chip_id: "0x0042" gwsw_version: "2.6.0" ipum_sw_version: "2.6.0" }
    devices { ip: "192.0.2.1" server_port: 50052 rdma_port: 50053 device_id: 1 routing_id: 1 ipu_arch_id: 1 ipu_id: 1 }
    attributes { key: "sync_type" value: "pod_native_default" } } }"""),
    ("partition-status.bin", "GetPartitionStatusReply", """
status { partition_id: "ipujob-ml-team-bert-x7k2p-0" ready_state: PS_ERROR operation_state: POS_RESETTING
         errors: "IPU 2 of ipum-0 failed its link training" max_auto_reset_retries: 3 auto_reset_retry_count: 1
         last_auto_reset_time { seconds: 1710148467 nanos: 250000000 } }"""),
    ("partition-status-far-future.bin", "GetPartitionStatusReply", """
status { partition_id: "p" ready_state: PS_ACTIVE last_auto_reset_time { seconds: 253402300799 nanos: 999999999 } }"""),
    ("create-partition.bin", "CreatePartitionRequest", """
requirements { id: "ipujob-ml-team-bert-x7k2p-0" size: 4 cluster_id: "pod16" ipulink_routing_type: IRT_DNC num_ipulink_segments: 1
               gw_routing_type: GRT_RING sync_type: ST_POD_NATIVE_DEFAULT num_gcds: 1 num_replicas: 1 allocation_id: "ml-team"
               ipus { ipulink_domain_topology_id: 0 topology_id: 2 routing_id: 0 }
               ipus { ipulink_domain_topology_id: 0 topology_id: 3 routing_id: 1 } }
disable_auto_reset: false relocatable: true"""),
]
out = here / "corpus" / "vipu_reply"
out.mkdir(parents=True, exist_ok=True)
for name, message, text in replies:
    encoded = subprocess.run(
        ["protoc", f"--proto_path={repo / 'operator' / 'lib'}", f"--encode=virmgrpc.{message}", "vipu/proto/virmgrpc.proto"],
        input=text.encode(), stdout=subprocess.PIPE, check=True).stdout
    (out / name).write_bytes(encoded)

# --- Runtime protocol: u32 length (big-endian) | u8 type | payload. The first byte of a seed is the fuzzer's
# chunk size, not part of the stream.
PING, PONG, RUN, STDIN, STDIN_CLOSE, STDOUT, STDERR, SIGNAL, EXIT, FINISH, ERROR = range(1, 12)


def frame(kind, payload=b""):
    return struct.pack(">IB", len(payload), kind) + payload


def i32(value):
    return struct.pack(">i", value)


streams = [
    ("ping-pong.bin", 3, frame(PING) + frame(PONG, b"bert-training-multi-ipu-x7k2p-worker-0")),
    ("client-run.bin", 7, frame(RUN, b"cd /workspace && python3 train.py --replicas 4") + frame(STDIN, b"y\n") +
     frame(STDIN_CLOSE) + frame(SIGNAL, i32(15))),
    ("agent-output.bin", 16, frame(STDOUT, b"step 1/10 loss 7.91\n") + frame(STDERR, b"warning: slow link\n") +
     frame(EXIT, i32(137) + i32(9))),
    ("finish.bin", 1, frame(FINISH, i32(0) + b"launcher exited with 0")),
    ("error.bin", 5, frame(ERROR, b"refused: the agent is already running a command")),
    ("truncated.bin", 2, frame(STDOUT, b"partial output")[:9]),
]
out = here / "corpus" / "runtime_frame"
out.mkdir(parents=True, exist_ok=True)
for name, chunk, stream in streams:
    (out / name).write_bytes(bytes([chunk - 1]) + stream)

# --- The agent's connection state machine: a script of events, one opcode byte each (see
# agent_session_fuzzer.cpp): 0 handshake done, 1 handshake failed, 2 <n> <n bytes> received, 3 peer closed,
# 4 peer's connection failed, 5 <t> t×100 ms passed.
HANDSHAKE_DONE, HANDSHAKE_FAILED, RECEIVED, CLOSED, FAILED, TIME = range(6)


def received(data, chunk=255):
    script = b""
    for at in range(0, len(data), chunk):
        part = data[at:at + chunk]
        script += bytes([RECEIVED, len(part)]) + part
    return script


scripts = [
    ("ping.bin", bytes([HANDSHAKE_DONE]) + received(frame(PING))),
    ("run-byte-by-byte-then-stdin.bin",
     bytes([HANDSHAKE_DONE]) + received(frame(RUN, b"orted --hnp-uri 1.2.3.4:5") + frame(STDIN, b"y\n"), 1)),
    ("finish.bin", bytes([HANDSHAKE_DONE, TIME, 20]) + received(frame(FINISH, i32(3) + b"launch failed"))),
    ("signal-request.bin", bytes([HANDSHAKE_DONE]) + received(frame(SIGNAL, i32(15)))),
    ("handshake-failed.bin", bytes([HANDSHAKE_FAILED]) + received(frame(PING))),
    ("handshake-timeout.bin", bytes([TIME, 99, TIME, 1])),
    ("cut-frame.bin", bytes([HANDSHAKE_DONE]) + received(frame(RUN, b"sleep 1")[:7]) + bytes([CLOSED])),
    ("silent-after-handshake.bin", bytes([HANDSHAKE_DONE, TIME, 50, TIME, 50, FAILED])),
    ("oversized-header.bin", bytes([HANDSHAKE_DONE]) + received(b"\xff\xff\xff\xff\x03")),
]
out = here / "corpus" / "agent_session"
out.mkdir(parents=True, exist_ok=True)
for name, script in scripts:
    (out / name).write_bytes(script)

# --- Worker commands: the container's command and args as words separated by NUL bytes (see
# worker_command_fuzzer.cpp); the users' manifests' scripts as they are in examples/ipujobs.
def manifest_script(name):
    lines = (repo / "examples" / "ipujobs" / name).read_text().splitlines()
    start = lines.index("            - |") + 1
    body = []
    for line in lines[start:]:
        if not line.startswith("              "):
            break
        body.append(line[14:] + "\n")
    return "".join(body)

commands = [
    ("bert-poprun-64ipus.args", ["/bin/bash", "-c", "--", manifest_script("bert-poprun-64ipus.yaml")]),
    ("bert-training-multi-ipu.args", ["/bin/bash", "-c", "--", manifest_script("bert-training-multi-ipu.yaml")]),
    ("mpirun.args", ["mpirun", "--tag-output", "-np", "4", "python3", "-c", "print(1)"]),
    ("env-timeout.args", ["env", "-u", "X", "A=1", "timeout", "-s", "INT", "3h", "mpiexec", "-n", "2", "prog"]),
    ("script-file.args", ["/bin/bash", "/workspace/train.sh"]),
    ("kubernetes-reference.args", ["sh", "-c", "$(LAUNCHER) prog; mpirun -np $(WORKERS) x"]),
    ("compound.args", ["bash", "-o", "pipefail", "-ec",
                       "if [ -x /usr/bin/poprun ]; then\n  exec poprun --vv python3 a.py 2>&1 | tee log\nelse\n"
                       "  for h in a b; do echo $h; done\nfi\ncase $x in a) eval \"$CMD\";; esac\n"]),
    ("here-document.args", ["sh", "-c", "cat <<-'EOF' > run.txt\n\tmpirun -np 2 prog\n\tEOF\n`which python3` "
                            "\"${A:-b}\" $'c\\'d' a=(1 2) \\\n  ./launch.sh"]),
    ("nested.args", ["busybox", "sh", "-c", "cd /w && bash -c 'sh -c \"mpirun prog\"'"]),
]
out = here / "corpus" / "worker_command"
out.mkdir(parents=True, exist_ok=True)
for name, words in commands:
    (out / name).write_bytes("\0".join(words).encode())
