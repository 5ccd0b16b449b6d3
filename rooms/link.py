"""One MQTT connection to the tournament's broker (paho-mqtt 2.x, MQTT 5).

paho's network thread (`loop_start`) reconnects by itself after a broker restart or a cut
cable, with a short back-off; `connected` and `refused` tell the screens where the link
stands. paho keeps its own session only in memory, so nothing here relies on it for
delivery: the room box's log is the outbox and the director acknowledges what it applied
(rooms.room, rooms.director). The director still asks for a persistent session
(clean_start False, a session expiry), so the broker queues QoS 1 messages for it while its
process restarts — a shortcut, never the guarantee."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

log = logging.getLogger("svoyak.rooms")

KEEPALIVE_S = 5
SESSION_EXPIRY_S = 2 * 24 * 3600
# Two clients with one room's code take its connection from each other: the broker gives a
# client id (the code's user name, `use_username_as_clientid`) to the newest connection and
# closes the older one, and Mosquitto 2.0 cannot be told to refuse the newcomer instead, nor
# does it say why it closed the old one. So a link whose connections keep ending within
# SHORT_S of being made, FLAPS times in a row, stops connecting and says so, rather than put
# the other client off in turn for ever; the host connects it again (`reconnect`).
SHORT_S = 5.0
FLAPS = 3
QOS = 1


@dataclass(frozen=True, slots=True)
class Broker:
    host: str
    port: int
    username: str
    password: str


Handler = Callable[[str, bytes, bool], None]  # topic, payload, retained


def no_delay(_client: Any, _userdata: Any, sock: Any) -> None:
    """paho's socket without Nagle's algorithm (paho leaves it on). A room box publishes a
    command's events right after the one before, and with Nagle the kernel holds each small
    message back until the broker has acknowledged the previous one's bytes: tens of ms
    between a verdict on the room box and the director's screen, on an idle machine. The
    broker's side is the role's ``set_tcp_nodelay``."""
    with contextlib.suppress(OSError, AttributeError):  # not a TCP socket: nothing to do
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Link:
    """A connection that keeps itself up. `on_message(topic, payload, retained)`, `on_up()`
    and `on_down()` (the connection lost, or refused by the broker) run on paho's thread;
    keep them short."""

    def __init__(self, broker: Broker, *, subscriptions: list[str], on_message: Handler,
                 on_up: Callable[[], None] | None = None,
                 on_down: Callable[[], None] | None = None, persistent: bool = False,
                 will: tuple[str, bytes] | None = None):
        self.broker = broker
        self.subscriptions = subscriptions
        self.on_message = on_message
        self.on_up = on_up
        self.on_down = on_down
        self.persistent = persistent
        self.connected = False
        self.refused: str | None = None  # the broker's reason when it turned us away
        # Another client connected with our credentials and the broker put us off: this link
        # then stays down (connecting again would put the other off in turn, for ever) until
        # `reconnect()` or a restart of the link.
        self.taken_over = False
        self.takeovers = 0  # connections lost soon after they were made
        self._short = 0  # ... in a row
        self._connected_at = 0.0
        self.last_change = time.time()
        self.published = 0
        self._stopping = False
        self._cond = threading.Condition()
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=broker.username,
                        protocol=mqtt.MQTTv5)
        c.username_pw_set(broker.username, broker.password)
        c.reconnect_delay_set(min_delay=1, max_delay=2)
        c.max_inflight_messages_set(100)
        if will is not None:
            c.will_set(will[0], will[1], qos=QOS, retain=True)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_message = self._on_message
        c.on_socket_open = no_delay
        self.client = c

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> Link:
        props = None
        if self.persistent:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = SESSION_EXPIRY_S
        self.client.connect_async(self.broker.host, self.broker.port, keepalive=KEEPALIVE_S,
                                  clean_start=not self.persistent, properties=props)
        self.client.loop_start()
        return self

    def stop(self, last: tuple[str, bytes] | None = None) -> None:
        self._stopping = True
        if last is not None and self.connected:
            self.client.publish(last[0], last[1], qos=QOS, retain=True).wait_for_publish(2)
        self.client.disconnect()
        self.client.loop_stop()

    def reconnect(self) -> None:
        """Connect again after a takeover (the host's choice: the other box is gone)."""
        if self.taken_over:
            self.taken_over = False
            self._short = 0
            self.client.loop_stop()
            self._stopping = False
            self.start()

    def wait_connected(self, timeout_s: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self.connected, timeout_s)

    # -- sending ---------------------------------------------------------------------------
    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> bool:
        """Hand a QoS 1 message to paho; False when the link is down (the caller's outbox
        keeps it and sends again after the reconnect)."""
        if not self.connected:
            return False
        info = self.client.publish(topic, payload, qos=QOS, retain=retain)
        if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            return False
        self.published += 1
        return True

    # -- paho callbacks --------------------------------------------------------------------
    def _on_connect(self, client: mqtt.Client, _ud: Any, _flags: Any, reason: Any,
                    _props: Any) -> None:
        if reason.is_failure:
            self.refused = str(reason)
            log.warning("rooms link: the broker refused %s: %s", self.broker.username, reason)
            self._tell_down()
            return
        self.refused = None
        self._connected_at = time.monotonic()
        for topic in self.subscriptions:
            client.subscribe(topic, qos=QOS)
        with self._cond:
            self.connected = True
            self.last_change = time.time()
            self._cond.notify_all()
        log.info("rooms link up (%s)", self.broker.username)
        if self.on_up is not None:
            try:
                self.on_up()
            except Exception:
                log.exception("rooms link: on_up failed")

    def _on_disconnect(self, client: mqtt.Client, _ud: Any, _flags: Any, reason: Any,
                       _props: Any) -> None:
        if self.connected and not self._stopping:
            if time.monotonic() - self._connected_at < SHORT_S:
                self.takeovers += 1
                self._short += 1
            else:
                self._short = 0
            if self._short >= FLAPS:
                self.taken_over = True
                log.error("rooms link (%s): the broker closed %d connections in a row right "
                          "after making them: another client uses these credentials. This "
                          "box stays off the broker until asked to connect again",
                          self.broker.username, self._short)
                # called on paho's own thread, loop_stop() only ends its loop (no reconnect)
                client.loop_stop()
        with self._cond:
            if self.connected:
                log.warning("rooms link down (%s): %s", self.broker.username, reason)
            self.connected = False
            self.last_change = time.time()
        self._tell_down()

    def _tell_down(self) -> None:
        if self.on_down is not None:
            try:
                self.on_down()
            except Exception:
                log.exception("rooms link: on_down failed")

    def _on_message(self, _c: mqtt.Client, _ud: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            self.on_message(msg.topic, bytes(msg.payload), bool(msg.retain))
        except Exception:
            log.exception("rooms link: a message on %s failed", msg.topic)
