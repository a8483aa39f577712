//! [`Lane`]: a connection of Wharf's own to one Redis, for the one command every request of a
//! 2025 session sends (the session's read, with its expiry pushed out now and then). The
//! `redis` crate's connection reads each answer with a general parser that cost more than the
//! rest of the request; this one writes what the requests queued in one write and reads RESP2
//! by hand. It connects on first use and again after a failure, and every command has the
//! same deadline as on the `redis` crate's connection.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::deadlines::{CONNECT_TIMEOUT, RESPONSE_TIMEOUT};
use crate::resp::{self, Reply};

/// Commands waiting for the connection: beyond this, a request fails rather than queue.
const MOST_QUEUED: usize = 4096;
/// The most bytes of queued commands written at once.
const MOST_WRITTEN: usize = 64 << 10;

/// Commands that go out together, and where their replies go.
struct Queued {
    /// Shared with the caller, which sends them again after a lost connection.
    commands: Bytes,
    replies: usize,
    answer: oneshot::Sender<Result<Vec<Reply>, Failure>>,
}

/// Where to connect, and what to say first.
#[derive(Clone)]
pub(crate) struct Node {
    host: String,
    port: u16,
    /// `AUTH`, `SELECT`, sent one after the other.
    greeting: Vec<Greeting>,
}

/// One command of the greeting, written, and what to send instead if Redis does not know its
/// form: `AUTH USER PASSWORD` is Redis 6's; Redis 5 takes the password alone.
#[derive(Clone)]
struct Greeting {
    command: Vec<u8>,
    older_form: Option<Vec<u8>>,
}

impl Node {
    /// The node `info` names, when it is plain TCP (TLS and Unix sockets stay on the `redis`
    /// crate's connection).
    pub(crate) fn of(info: &redis::ConnectionInfo) -> Option<Node> {
        let redis::ConnectionAddr::Tcp(host, port) = info.addr() else { return None };
        let settings = info.redis_settings();
        let written = |parts: &[&[u8]]| {
            let mut command = Vec::new();
            resp::command(&mut command, parts);
            command
        };
        let mut greeting = Vec::new();
        if let Some(password) = settings.password() {
            let password_alone = written(&[b"AUTH", password.as_bytes()]);
            greeting.push(match settings.username() {
                Some(user) => Greeting {
                    command: written(&[b"AUTH", user.as_bytes(), password.as_bytes()]),
                    older_form: Some(password_alone),
                },
                None => Greeting { command: password_alone, older_form: None },
            });
        }
        if settings.db() != 0 {
            let db = settings.db().to_string();
            greeting.push(Greeting { command: written(&[b"SELECT", db.as_bytes()]), older_form: None });
        }
        Some(Node { host: host.clone(), port: *port, greeting })
    }
}

/// The handle requests send commands through; cheap to clone.
#[derive(Clone)]
pub(crate) struct Lane {
    queue: mpsc::Sender<Queued>,
}

impl Lane {
    /// A lane to `node`, whose connection task runs on the current runtime.
    pub(crate) fn new(node: Node) -> Lane {
        let (queue, queued) = mpsc::channel(MOST_QUEUED);
        tokio::spawn(run(node, queued));
        Lane { queue }
    }

    /// Sends `commands` (written with [`resp::command`]) and gives their `replies` replies, in
    /// order; an error when Redis cannot be reached, fails, or does not answer within
    /// [`RESPONSE_TIMEOUT`] of their write (the connection's task keeps that deadline, so that
    /// a request arms no timer of its own). Only commands that may run twice go here: a
    /// connection that ended before their replies came (Redis closed an idle one, say) is made
    /// again and they are sent once more.
    pub(crate) async fn query(&self, commands: Vec<u8>, replies: usize) -> Result<Vec<Reply>, String> {
        let commands = Bytes::from(commands);
        let mut last = String::new();
        for _ in 0..2 {
            let (answer, answered) = oneshot::channel();
            let queued = Queued { commands: commands.clone(), replies, answer };
            self.queue.try_send(queued).map_err(|err| match err {
                mpsc::error::TrySendError::Full(_) => "too many commands wait for Redis".to_owned(),
                // Its task ended with the runtime it ran on.
                mpsc::error::TrySendError::Closed(_) => "the connection to Redis is gone".to_owned(),
            })?;
            match answered.await {
                Ok(Ok(answer)) => return Ok(answer),
                Ok(Err(Failure::Connection(err))) => last = err,
                Ok(Err(Failure::Unreachable(err) | Failure::TimedOut(err))) => return Err(err),
                Err(_) => return Err("the connection to Redis ended".to_owned()),
            }
        }
        Err(last)
    }
}

/// Why queued commands got no replies.
#[derive(Clone)]
enum Failure {
    /// The connection failed after they were queued: sending them again may work.
    Connection(String),
    /// No connection could be made.
    Unreachable(String),
    /// Redis did not answer the oldest in time: they may have run, and are not sent again.
    TimedOut(String),
}

impl Failure {
    fn text(&self) -> &str {
        match self {
            Failure::Connection(text) | Failure::Unreachable(text) | Failure::TimedOut(text) => text,
        }
    }
}

/// The connection's task: connects when a command comes, serves until the connection fails,
/// and ends when every [`Lane`] is gone.
async fn run(node: Node, mut queued: mpsc::Receiver<Queued>) {
    while let Some(first) = queued.recv().await {
        match connect(&node).await {
            Ok(stream) => {
                if let Err(failure) = serve(stream, first, &mut queued).await {
                    tracing::debug!(err = failure.text(), "the session lane's connection to Redis ended");
                }
            }
            Err(err) => {
                // Everything already waiting fails now, as the `redis` crate's connection does.
                let _ = first.answer.send(Err(Failure::Unreachable(err.clone())));
                while let Ok(waiting) = queued.try_recv() {
                    let _ = waiting.answer.send(Err(Failure::Unreachable(err.clone())));
                }
            }
        }
    }
}

async fn connect(node: &Node) -> Result<TcpStream, String> {
    let connecting = TcpStream::connect((node.host.as_str(), node.port));
    let mut stream = match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(err)) => return Err(format!("cannot connect to Redis: {}", err.kind())),
        Err(_) => return Err("connecting to Redis took too long".to_owned()),
    };
    let _ = stream.set_nodelay(true);
    let greeted = async {
        let mut buffer = BytesMut::with_capacity(256);
        for greeting in &node.greeting {
            let mut reply = ask(&mut stream, &mut buffer, &greeting.command).await?;
            if let (Reply::Error(error), Some(older_form)) = (&reply, &greeting.older_form)
                && error.windows(25).any(|words| words == b"wrong number of arguments")
            {
                reply = ask(&mut stream, &mut buffer, older_form).await?;
            }
            if let Reply::Error(error) = reply {
                // Redis's own words name no secret (`WRONGPASS invalid username-password pair`).
                return Err(format!("Redis refused the connection: {}", String::from_utf8_lossy(&error)));
            }
        }
        Ok(())
    };
    match tokio::time::timeout(RESPONSE_TIMEOUT, greeted).await {
        Ok(Ok(())) => Ok(stream),
        Ok(Err(err)) => Err(err),
        Err(_) => Err("Redis did not answer AUTH or SELECT in time".to_owned()),
    }
}

/// Sends one command and reads its reply, while nothing else is on the connection.
async fn ask(stream: &mut TcpStream, buffer: &mut BytesMut, command: &[u8]) -> Result<Reply, String> {
    stream.write_all(command).await.map_err(|err| format!("cannot write to Redis: {}", err.kind()))?;
    loop {
        if let Some(reply) = resp::take_reply(buffer).map_err(|err| err.to_string())? {
            return Ok(reply);
        }
        if stream.read_buf(buffer).await.map_err(|err| format!("cannot read from Redis: {}", err.kind()))? == 0 {
            return Err("Redis closed the connection".to_owned());
        }
    }
}

/// Commands sent, whose replies are still to come.
struct Waiting {
    replies: usize,
    /// When it was written: the connection is given up once the oldest waits too long.
    written: Instant,
    answered: Vec<Reply>,
    answer: oneshot::Sender<Result<Vec<Reply>, Failure>>,
}

/// Writes queued commands and hands out replies, until the connection fails (every command
/// still waiting then fails) or every [`Lane`] is gone and nothing waits.
async fn serve(mut stream: TcpStream, first: Queued, queued: &mut mpsc::Receiver<Queued>) -> Result<(), Failure> {
    let mut waiting: VecDeque<Waiting> = VecDeque::new();
    let mut out = Vec::with_capacity(4096);
    let mut buffer = BytesMut::with_capacity(16 << 10);
    let mut open = true;
    let started = Instant::now();
    take(first, &mut out, &mut waiting, started);
    // Fires no later than the oldest command's deadline: set again only when it fires early
    // (the oldest it was set for was answered), so that a busy lane touches the timer about
    // once per deadline, not once per command.
    let watchdog = tokio::time::sleep_until(started + RESPONSE_TIMEOUT);
    tokio::pin!(watchdog);
    let stopped_answering = || Failure::TimedOut("Redis did not answer in time".to_owned());
    let outcome = loop {
        // One reading of the clock for all this turn does: the commands it writes and the
        // deadline it checks.
        let now = Instant::now();
        while out.len() < MOST_WRITTEN
            && waiting.len() < MOST_QUEUED
            && let Ok(more) = queued.try_recv()
        {
            take(more, &mut out, &mut waiting, now);
        }
        if !out.is_empty() {
            // A write that does not end (Redis reads nothing) fails like a reply that never comes.
            match tokio::time::timeout(RESPONSE_TIMEOUT, stream.write_all(&out)).await {
                Ok(Ok(())) => out.clear(),
                Ok(Err(err)) => break Err(Failure::Connection(format!("cannot write to Redis: {}", err.kind()))),
                Err(_) => break Err(stopped_answering()),
            }
        }
        if !open && waiting.is_empty() {
            break Ok(());
        }
        // Redis stopped answering on this connection (stopped, or a peer gone without a word):
        // what waits fails, and a new connection is made for what comes next. Checked here as
        // well as by the watchdog, which a lane never short of work might not get to poll.
        if waiting.front().is_some_and(|oldest| now.saturating_duration_since(oldest.written) > RESPONSE_TIMEOUT) {
            break Err(stopped_answering());
        }
        tokio::select! {
            biased;
            read = stream.read_buf(&mut buffer) => match read {
                Ok(0) => break Err(Failure::Connection("Redis closed the connection".to_owned())),
                Ok(_) => {
                    if let Err(err) = hand_out(&mut buffer, &mut waiting) {
                        break Err(Failure::Connection(err));
                    }
                }
                Err(err) => break Err(Failure::Connection(format!("cannot read from Redis: {}", err.kind()))),
            },
            next = queued.recv(), if open && waiting.len() < MOST_QUEUED => match next {
                Some(next) => {
                    // The turn's clock may be long past: the lane waited here for work.
                    take(next, &mut out, &mut waiting, Instant::now());
                    // Under load (replies still to come), let the requests this worker is about
                    // to run queue theirs first, so that one write carries them all.
                    if waiting.len() > 1 {
                        tokio::task::yield_now().await;
                    }
                }
                None => open = false,
            },
            () = &mut watchdog, if !waiting.is_empty() => {
                let due = waiting.front().map_or(now, |oldest| oldest.written + RESPONSE_TIMEOUT);
                if Instant::now() >= due {
                    break Err(stopped_answering());
                }
                watchdog.as_mut().reset(due);
            },
        }
    };
    if let Err(failure) = &outcome {
        for left in waiting.drain(..) {
            let _ = left.answer.send(Err(failure.clone()));
        }
    }
    outcome
}

fn take(queued: Queued, out: &mut Vec<u8>, waiting: &mut VecDeque<Waiting>, now: Instant) {
    if queued.replies == 0 {
        let _ = queued.answer.send(Ok(Vec::new()));
        return;
    }
    if queued.answer.is_closed() {
        // Its caller gave up before it was written: nothing will wait for its replies.
        return;
    }
    out.extend_from_slice(&queued.commands);
    waiting.push_back(Waiting {
        replies: queued.replies,
        written: now,
        answered: Vec::with_capacity(queued.replies),
        answer: queued.answer,
    });
}

/// Gives each whole reply in `buffer` to the command it answers.
fn hand_out(buffer: &mut BytesMut, waiting: &mut VecDeque<Waiting>) -> Result<(), String> {
    while let Some(reply) = resp::take_reply(buffer).map_err(|err| err.to_string())? {
        let Some(front) = waiting.front_mut() else { return Err("Redis answered a command never sent".to_owned()) };
        front.answered.push(reply);
        if front.answered.len() == front.replies
            && let Some(done) = waiting.pop_front()
        {
            let _ = done.answer.send(Ok(done.answered));
        }
    }
    if buffer.capacity() - buffer.len() < 1024 {
        buffer.reserve(16 << 10);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use bytes::Bytes;
    use wharf_testkit::redis_server::RedisServer;

    use super::*;

    /// Sends `commands` (inline, one per line) on a connection of the test's own and gives
    /// what came back within a short while.
    fn raw(port: u16, commands: &str) -> String {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(std::time::Duration::from_millis(300))).unwrap();
        stream.write_all(commands.as_bytes()).unwrap();
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(read) = stream.read(&mut chunk) {
            if read == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..read]);
        }
        String::from_utf8_lossy(&answer).into_owned()
    }

    fn lane_to(url: &str) -> Lane {
        let client = redis::Client::open(url).unwrap();
        Lane::new(Node::of(client.get_connection_info()).expect("plain TCP"))
    }

    fn commands(list: &[&[&[u8]]]) -> Vec<u8> {
        let mut out = Vec::new();
        for parts in list {
            resp::command(&mut out, parts);
        }
        out
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn it_signs_in_chooses_the_database_and_answers_each_request_its_own_replies() {
        let redis = RedisServer::start();
        assert!(raw(redis.port, "CONFIG SET requirepass s3cret\r\n").starts_with("+OK"));
        let lane = lane_to(&format!("redis://:s3cret@127.0.0.1:{}/3", redis.port));
        let set = lane.query(commands(&[&[b"SET", b"k", b"v"], &[b"GET", b"k"]]), 2).await.unwrap();
        assert_eq!(set, vec![Reply::Status(Bytes::from_static(b"OK")), Reply::Bulk(Some(Bytes::from_static(b"v")))]);
        let seen = raw(redis.port, "AUTH s3cret\r\nSELECT 3\r\nGET k\r\nSELECT 0\r\nEXISTS k\r\n");
        assert_eq!(seen, "+OK\r\n+OK\r\n$1\r\nv\r\n+OK\r\n:0\r\n", "written to database 3 only");

        // Many requests at once, each one's commands in one write: every one gets its own.
        let mut asked = Vec::new();
        for n in 0..300u32 {
            let lane = lane.clone();
            asked.push(tokio::spawn(async move {
                let key = format!("n{n}");
                let value = n.to_string();
                let sent = commands(&[&[b"SET", key.as_bytes(), value.as_bytes()], &[b"GET", key.as_bytes()]]);
                (value, lane.query(sent, 2).await.unwrap())
            }));
        }
        for asked in asked {
            let (value, replies) = asked.await.unwrap();
            assert_eq!(replies[1], Reply::Bulk(Some(Bytes::from(value.into_bytes()))));
        }
        let error = lane.query(commands(&[&[b"INCR", b"k"]]), 1).await.unwrap();
        assert!(matches!(&error[0], Reply::Error(text) if text.starts_with(b"ERR")), "{error:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_connection_redis_closed_is_made_again_without_failing_the_next_request() {
        let redis = RedisServer::start();
        let lane = lane_to(&redis.url());
        let ping = || lane.query(commands(&[&[b"PING"]]), 1);
        for _ in 0..3 {
            assert_eq!(ping().await.unwrap(), vec![Reply::Status(Bytes::from_static(b"PONG"))]);
            assert!(raw(redis.port, "CLIENT KILL TYPE normal\r\n").starts_with(":1"), "the lane's was closed");
        }
        assert_eq!(ping().await.unwrap(), vec![Reply::Status(Bytes::from_static(b"PONG"))]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_peer_that_never_answers_is_left_for_a_new_connection() {
        // A listener that takes connections and never says a word: a Redis gone without a word.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = accepted.clone();
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            for stream in silent.incoming().flatten() {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                kept.push(stream);
            }
        });
        let lane = lane_to(&format!("redis://127.0.0.1:{port}/"));
        let ping = || lane.query(commands(&[&[b"PING"]]), 1);
        assert_eq!(ping().await.unwrap_err(), "Redis did not answer in time");
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
        // The first command's deadline passed a moment ago; let it be well past.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert_eq!(ping().await.unwrap_err(), "Redis did not answer in time");
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2, "the silent connection was given up");
    }

    /// The connection's watchdog, set for an earlier command that was answered, still fails a
    /// later one at that one's own deadline: never before it, and not long after.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_command_redis_holds_fails_at_its_own_deadline() {
        let redis = RedisServer::start();
        let lane = lane_to(&redis.url());
        let ping = || lane.query(commands(&[&[b"PING"]]), 1);
        assert_eq!(ping().await.unwrap(), vec![Reply::Status(Bytes::from_static(b"PONG"))]);
        tokio::time::sleep(RESPONSE_TIMEOUT / 2).await;
        // Redis holds every client's commands for longer than the deadline.
        assert!(raw(redis.port, "CLIENT PAUSE 4000 ALL\r\n").starts_with("+OK"));
        let started = std::time::Instant::now();
        assert_eq!(ping().await.unwrap_err(), "Redis did not answer in time");
        let waited = started.elapsed();
        assert!(waited >= RESPONSE_TIMEOUT, "failed before its deadline: {waited:?}");
        assert!(waited < RESPONSE_TIMEOUT + RESPONSE_TIMEOUT / 2, "failed long after its deadline: {waited:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wrong_password_is_refused_without_showing_it() {
        let redis = RedisServer::start();
        assert!(raw(redis.port, "CONFIG SET requirepass s3cret\r\n").starts_with("+OK"));
        let lane = lane_to(&format!("redis://:not-it@127.0.0.1:{}/", redis.port));
        let err = lane.query(commands(&[&[b"PING"]]), 1).await.unwrap_err();
        assert!(err.contains("refused") && !err.contains("not-it"), "{err}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn while_redis_is_down_commands_fail_at_once_and_work_again_once_it_is_back() {
        let mut redis = RedisServer::start();
        let lane = lane_to(&redis.url());
        let ping = || lane.query(commands(&[&[b"PING"]]), 1);
        assert_eq!(ping().await.unwrap(), vec![Reply::Status(Bytes::from_static(b"PONG"))]);
        redis.stop();
        let started = std::time::Instant::now();
        assert!(ping().await.is_err());
        assert!(ping().await.is_err(), "a new connection is tried, and fails too");
        assert!(started.elapsed() < RESPONSE_TIMEOUT, "failed at once: {:?}", started.elapsed());
        redis.run();
        assert_eq!(ping().await.unwrap(), vec![Reply::Status(Bytes::from_static(b"PONG"))]);
    }
}
