//! The events of a 2025 session's response streams in Redis: kept in a Redis stream of the
//! session's own by one writer task per instance, in order and in batches, before a stream
//! sends them; read back for a resumed stream, and followed while another instance still sends
//! it (whose key, renewed every second, says it runs).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use crate::commands::query_apart;
use crate::connection::{Redis, millis, without_secrets};

/// One SSE event to keep, or (without a frame) the end of its stream.
#[derive(Debug)]
pub(crate) struct KeptEvent {
    pub(crate) session: String,
    pub(crate) stream: u64,
    pub(crate) sequence: u64,
    pub(crate) frame: Option<Bytes>,
    pub(crate) idle: Duration,
    /// Told once the event is in Redis (or could not be written), for the stream that waits
    /// to send it.
    pub(crate) kept: Option<oneshot::Sender<Result<(), String>>>,
}

/// How many events of one session Redis keeps (about: the stream is trimmed where it is
/// cheap); older ones are dropped first.
pub(crate) const EVENTS_PER_SESSION: usize = 1000;
/// How many events may wait for Redis; the streams that send more wait for room.
pub(crate) const EVENTS_WAITING: usize = 4096;
/// How many waiting events go to Redis in one round trip.
pub(crate) const EVENTS_PER_WRITE: usize = 64;
/// How long a batch of events is tried again while Redis fails, before its streams send it
/// unkept: a cluster's failover, its retries included, takes a few seconds.
const KEEP_PATIENCE: Duration = Duration::from_secs(6);
/// How often an instance that keeps events says again that it runs, and how long that lasts:
/// long enough that a Redis failing over for a few seconds does not make it look dead.
const ALIVE_EVERY: Duration = Duration::from_secs(1);
const ALIVE_FOR: Duration = Duration::from_secs(6);
/// How often an instance following a stream another instance sends looks for more.
const FOLLOW_EVERY: Duration = Duration::from_millis(50);
/// How long a followed stream whose sender is not known may stay quiet before the instance
/// following it gives up (its sender may have died); the client then resumes again if it
/// wants.
const FOLLOW_QUIET: Duration = Duration::from_secs(5);

/// Writes kept events to Redis in the order they came, in batches of one round trip each (on a
/// cluster a part per session: a session's events share a slot, and its order), and tells each event's
/// stream once its batch is written.
pub(crate) async fn write_events(redis: Redis, instance: Arc<str>, mut events: mpsc::Receiver<KeptEvent>) {
    let mut batch = Vec::with_capacity(EVENTS_PER_WRITE);
    let mut waiting = Vec::with_capacity(EVENTS_PER_WRITE);
    let mut patience = KEEP_PATIENCE;
    // Said before the first event is kept, which names this instance; then again and again
    // by a task of its own, which a batch waiting out a failover does not hold up.
    say_alive(&redis, &instance).await;
    let saying = tokio::spawn(keep_saying_alive(redis.clone(), instance.clone()));
    while events.recv_many(&mut batch, EVENTS_PER_WRITE).await > 0 {
        // On one Redis the whole batch is one pipeline; on a cluster a part per session.
        let by_session = redis.connection.is_cluster();
        let mut parts: Vec<(String, redis::Pipeline)> = Vec::new();
        for mut event in batch.drain(..) {
            waiting.extend(event.kept.take());
            let part = if by_session { event.session.as_str() } else { "" };
            let at = match parts.iter().position(|(session, _)| session == part) {
                Some(at) => at,
                None => {
                    parts.push((part.to_owned(), redis::pipe()));
                    parts.len() - 1
                }
            };
            let pipe = &mut parts[at].1;
            let key = redis.keys.events(&event.session);
            pipe.cmd("XADD")
                .arg(&key)
                .arg("MAXLEN")
                .arg("~")
                .arg(EVENTS_PER_SESSION)
                .arg("*")
                .arg("s")
                .arg(event.stream);
            match &event.frame {
                Some(frame) => pipe.arg("q").arg(event.sequence).arg("f").arg(frame.as_ref()),
                None => pipe.arg("end").arg("1"),
            };
            if event.sequence == 0 && event.frame.is_some() {
                // The stream's first event names its sender.
                pipe.arg("i").arg(instance.as_ref());
            }
            pipe.cmd("PEXPIRE").arg(&key).arg(millis(event.idle));
        }
        let parts: Vec<redis::Pipeline> = parts.into_iter().map(|(_, pipe)| pipe).collect();
        let written = write_patiently(&redis, &parts, patience).await;
        // Once a batch waited out its patience, Redis is down rather than failing over: the
        // batches after it are tried once, until one is written again.
        patience = if written.is_ok() { KEEP_PATIENCE } else { Duration::ZERO };
        if let Err(err) = &written {
            tracing::warn!(error = %err, "stream events could not be kept");
        }
        for kept in waiting.drain(..) {
            let _ = kept.send(written.clone());
        }
    }
    // The store is gone: this instance keeps no more events.
    saying.abort();
}

/// Says, every [`ALIVE_EVERY`], that `instance` runs.
async fn keep_saying_alive(redis: Redis, instance: Arc<str>) {
    let mut every = tokio::time::interval(ALIVE_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every.reset();
    loop {
        every.tick().await;
        say_alive(&redis, &instance).await;
    }
}

/// Says, for [`ALIVE_FOR`], that `instance` runs.
async fn say_alive(redis: &Redis, instance: &str) {
    let mut connection = redis.connection.clone();
    let said = redis::cmd("SET")
        .arg(redis.keys.instance_alive(instance))
        .arg(1)
        .arg("PX")
        .arg(millis(ALIVE_FOR))
        .query_async::<()>(&mut connection)
        .await;
    if let Err(err) = said {
        tracing::debug!(error = %without_secrets(&err), "could not say that this instance runs");
    }
}

/// Whether `instance` said it runs within the last [`ALIVE_FOR`]; true when Redis cannot
/// tell (a stream is given up for a sender known dead only).
pub(crate) async fn is_alive(redis: &Redis, instance: &str) -> bool {
    let mut connection = redis.connection.clone();
    let exists =
        redis::cmd("EXISTS").arg(redis.keys.instance_alive(instance)).query_async::<i64>(&mut connection).await;
    !matches!(exists, Ok(0))
}

/// Writes a batch of events, and again while Redis fails, for up to `patience`: a failover
/// takes a few seconds, and the streams waiting on the batch had rather pause than send events
/// a resume would miss. An event written twice (the first answer lost) is replayed once.
async fn write_patiently(redis: &Redis, parts: &[redis::Pipeline], patience: Duration) -> Result<(), String> {
    let started = tokio::time::Instant::now();
    let mut pause = Duration::from_millis(100);
    loop {
        match query_apart(&redis.connection, parts).await {
            Ok(_) => return Ok(()),
            Err(err) if started.elapsed() + pause < patience => {
                tracing::debug!(error = %without_secrets(&err), "stream events could not be kept yet; trying again");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            Err(err) => return Err(without_secrets(&err)),
        }
    }
}

/// What a session's kept events hold of one stream.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Found {
    /// Its events after the point asked for, in order, each once.
    pub(crate) frames: Vec<Bytes>,
    /// The sequence of the last of them (the point asked for when there is none).
    pub(crate) last: u64,
    /// True when its end is kept too.
    pub(crate) ended: bool,
    /// The instance that sends it, when its first event is kept.
    pub(crate) sender: Option<String>,
}

/// What `entries` (each `[id, ["s", stream, "q", sequence, "f", frame]]`, or
/// `[id, ["s", stream, "end", "1"]]` for a stream's end) hold of `stream` after `after`; `None`
/// when none of them is of `stream`. An event kept twice (a batch written again after its
/// first try's answer was lost) is taken once: sequences only grow.
pub(crate) fn events_of(entries: &[(String, Vec<Vec<u8>>)], stream: u64, after: u64) -> Option<Found> {
    let number = |bytes: &[u8]| std::str::from_utf8(bytes).ok()?.parse::<u64>().ok();
    let mut found: Option<Found> = None;
    for (_, fields) in entries {
        if fields.len() < 4 || number(&fields[1]) != Some(stream) {
            continue;
        }
        let found = found.get_or_insert_with(|| Found { last: after, ..Found::default() });
        match fields.as_slice() {
            [_, _, end, _] if end.as_slice() == b"end" => found.ended = true,
            [_, _, _, _, _, _, sender, instance] if sender.as_slice() == b"i" => {
                found.sender = Some(String::from_utf8_lossy(instance).into_owned());
            }
            [_, _, _, sequence, _, frame] => match number(sequence) {
                Some(sequence) if sequence > found.last => {
                    found.frames.push(Bytes::copy_from_slice(frame));
                    found.last = sequence;
                }
                _ => {}
            },
            _ => {}
        }
    }
    found
}

/// Hands `frames` what the instance sending `stream` keeps next, from after the entry `last`
/// and the event `handed` on, until the stream ends, nobody reads it any more, or it stays
/// quiet too long: for [`FOLLOW_QUIET`] when its `sender` is not known, and otherwise once
/// its sender no longer says it runs (it died: the client resuming again is told so), which
/// is asked after each second without news.
pub(crate) async fn follow_events(
    redis: Redis,
    key: String,
    (stream, sender): (u64, Option<String>),
    (mut last, mut handed): (Option<String>, u64),
    frames: mpsc::Sender<Bytes>,
) {
    let mut heard = tokio::time::Instant::now();
    let quiet_for = if sender.is_some() { ALIVE_EVERY } else { FOLLOW_QUIET };
    loop {
        if heard.elapsed() >= quiet_for {
            match &sender {
                Some(sender) if is_alive(&redis, sender).await => heard = tokio::time::Instant::now(),
                _ => return,
            }
        }
        tokio::select! {
            () = tokio::time::sleep(FOLLOW_EVERY) => {}
            () = frames.closed() => return,
        }
        let start = last.as_ref().map_or_else(|| "-".to_owned(), |id| format!("({id}"));
        let mut connection = redis.connection.clone();
        let entries: Vec<(String, Vec<Vec<u8>>)> =
            match redis::cmd("XRANGE").arg(&key).arg(start).arg("+").query_async(&mut connection).await {
                Ok(entries) => entries,
                Err(err) => {
                    tracing::warn!(error = %without_secrets(&err), "a followed stream could not be read");
                    return;
                }
            };
        if let Some((id, _)) = entries.last() {
            last = Some(id.clone());
        }
        let Some(found) = events_of(&entries, stream, handed) else { continue };
        handed = found.last;
        heard = tokio::time::Instant::now();
        for frame in found.frames {
            if frames.send(frame).await.is_err() {
                return;
            }
        }
        if found.ended {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_streams_later_events_are_replayed_and_its_end_is_seen() {
        let entry =
            |fields: &[&str]| ("1-0".to_owned(), fields.iter().map(|field| field.as_bytes().to_vec()).collect());
        let mut entries = vec![
            entry(&["s", "7", "q", "1", "f", "a"]),
            entry(&["s", "8", "q", "1", "f", "other"]),
            entry(&["s", "7", "q", "2", "f", "b"]),
            entry(&["s", "7", "q", "x", "f", "bad"]),
        ];
        let b = || vec![Bytes::from_static(b"b")];
        assert_eq!(events_of(&entries, 7, 1), Some(Found { frames: b(), last: 2, ..Found::default() }));
        let nothing_after = Found { last: 2, ..Found::default() };
        assert_eq!(events_of(&entries, 7, 2), Some(nothing_after), "a kept stream with nothing after");
        assert_eq!(events_of(&entries, 9, 0), None, "a stream none of whose events is kept");
        // A batch written again (its first answer lost) keeps an event twice: replayed once.
        entries.push(entry(&["s", "7", "q", "2", "f", "b"]));
        entries.push(entry(&["s", "7", "end", "1"]));
        assert_eq!(events_of(&entries, 7, 1), Some(Found { frames: b(), last: 2, ended: true, sender: None }));
        // The first event names the instance that sends the stream.
        entries.insert(0, entry(&["s", "7", "q", "0", "f", "", "i", "a1b2"]));
        assert_eq!(events_of(&entries, 7, 1).and_then(|found| found.sender).as_deref(), Some("a1b2"));
        assert_eq!(events_of(&entries, 8, 0).map(|found| found.ended), Some(false));
    }
}
