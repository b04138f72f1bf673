"""Two minimal 3D-league agents for underlay's test of the real server.

Usage: two_agents.py HOST AGENT_PORT OUT_DIR STEPS

Connects one T1 agent per team to rcssservermj (4-byte big-endian length,
then S-expression text, both ways), beams them onto the pitch, asks their
heads to sweep, and writes every message received, one per line after its
receive time, to OUT_DIR/agent_<Team>_<n>.log, until each has STEPS. The
second agent joins once the first has had a few messages (rcsssmj 0.2.1
fails, in its audio engine, when an agent joins before the simulation
has stepped since the last one joined); in sync mode the server waits for
one reply per message, so every message is answered."""
import math
import select
import socket
import struct
import sys
import time

host, port, out, steps = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])


def send(s, msg):
    b = msg.encode()
    s.sendall(struct.pack('>I', len(b)) + b)


def recv_exact(s, n):
    buf = b''
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError('server closed the connection')
        buf += chunk
    return buf


def recv(s):
    (n,) = struct.unpack('>I', recv_exact(s, 4))
    return recv_exact(s, n).decode()


class Agent:
    def __init__(self, team, unum, beam):
        for _ in range(600):
            try:
                self.s = socket.create_connection((host, port), timeout=60)
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit('cannot connect to the server')
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        send(self.s, f'(init T1 {team} {unum})')
        self.log = open(f'{out}/agent_{team}_{unum}.log', 'w')
        self.beam = beam
        self.count = 0

    def step(self):
        msg = recv(self.s)
        if self.count < steps:
            self.log.write(f'{time.time():.6f} {msg}\n')
        self.count += 1
        if self.count <= 3:
            send(self.s, self.beam)
        else:
            yaw = 60 * math.sin(self.count / 15)
            send(self.s, f'(he1 {yaw:.2f} 0 10 0.5 0)(he2 15 0 10 0.5 0)')


waiting = [('Alpha', 1, '(beam -6 2 30)'), ('Bravo', 1, '(beam -8 -3 0)')]
agents = []
while waiting or any(a.count < steps for a in agents):
    if waiting and all(a.count >= 5 for a in agents):
        agents.append(Agent(*waiting.pop(0)))
    ready, _, _ = select.select([a.s for a in agents], [], [], 60)
    if not ready:
        sys.exit('no message from the server for 60 s')
    for a in agents:
        if a.s in ready:
            a.step()
for a in agents:
    a.log.close()
    a.s.close()
