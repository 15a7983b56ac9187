//! The room log in Redis, shared by every node of a cluster: `--store redis://…`.
//!
//! The log is the same as SQLite's (a setup, numbered inputs, a snapshot at each rematch that
//! replaces what it covers); what Redis adds is **who may write it**. The router (HAProxy)
//! decides which node serves a room; the store *fences*: a node that gets a socket for a room it
//! does not hold claims it ([`RedisStore::claim`]), which moves the room's epoch on and records
//! the node as the owner with a lease. Every append carries the epoch of the node's claim and
//! the next sequence number, and a script accepts it only if both match, so a node that was
//! paused or cut off and still thinks it holds a room can never write into its log again: its
//! appends answer [`StoreError::Fenced`], and so does its next lease renewal.
//!
//! # Keys
//!
//! Every key of a room carries its code as a hash tag (`{CODE}`), so that the room's keys sit
//! in one slot and its scripts could run on a Redis Cluster:
//!
//! | key | type | what it holds |
//! | --- | --- | --- |
//! | `dhumbal:room:{CODE}:setup` | string | the setup, as created; the room exists while it does |
//! | `dhumbal:room:{CODE}:epoch` | string (integer) | how many times the room was claimed: 0 when created |
//! | `dhumbal:room:{CODE}:owner` | string, with the lease as its TTL | the id of the node that claimed it last |
//! | `dhumbal:room:{CODE}:log` | stream | the inputs after the snapshot: entry id `0-<seq>`, field `e` = the input |
//! | `dhumbal:room:{CODE}:snapshot` | hash | `seq` and `state`: the latest snapshot |
//! | `dhumbal:room:{CODE}:aside` | string | why the room was set aside (it is then never claimed) |
//! | `dhumbal:aside` | set | the codes of the rooms set aside, reported at every start |
//! | `dhumbal:match:{CODE}:<n>` | hash, expiring after `--keep-matches` | `commitment`, `tokens`, `history` of a finished match |
//!
//! A room's keys (but the owner's) expire [`RedisConfig::room_ttl`] after the last write or
//! lease renewal: a room that no node holds, and that nobody comes back to, goes by itself. A
//! room closed for good is deleted at once; a room set aside is kept (no expiry) for someone to
//! look at.
//!
//! # Scripts
//!
//! Each write is one Lua script, run atomically by Redis (`EVALSHA`, loaded again after a
//! restart of Redis): *create* (the setup, epoch 0, unless the code is taken), *claim* (`INCR`
//! the epoch, set the owner with the lease), *append* and *snapshot* (only with the room's
//! current epoch, and for an append only the next seq: the last seq is the newest entry's id, or
//! the snapshot's), *renew* (the owner's lease again, only with the current epoch), *release*
//! (the owner goes, if the epoch is still ours), *delete* (fenced like an append when this node
//! claimed the room) and *set aside*. Each answers `{status, …}`: 0 done, 1 fenced (with the
//! room's epoch), 2 not the next seq (with the last seq and the snapshot's), 3 no such room.
//!
//! # Failures
//!
//! The connection ([`ConnectionManager`]) reconnects by itself after a restart of Redis. A
//! write that fails for want of Redis (a dropped connection, a timeout, Redis still loading) is
//! tried again for up to a lease; an append tried again is accepted if the first try had landed
//! (the epoch is still ours and its seq is the last), so an answer lost on the way does not
//! stop the room. A lease renewal that fails that way is tried again at the next one; only a
//! renewal that finds the room claimed by another node (or gone) stops it.
//!
//! Each write runs as its own task from the moment it is called, so a write happens even if its
//! [`Pending`] is dropped; writes that a caller does not await may land in any order.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{Client, RedisError, RetryMethod, Script};
use tokio::sync::oneshot;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use super::{KeptMatch, Loaded, Pending, RedisConfig, StoreError, StoredRoom, check};
use crate::metrics::Metrics;

/// The set of the codes of the rooms set aside.
pub const ASIDE_INDEX: &str = "dhumbal:aside";

/// The parts of a room's keys, in the order every room script takes them as `KEYS`.
const PARTS: [&str; 6] = ["setup", "epoch", "owner", "log", "snapshot", "aside"];

/// How long [`RedisStore::load`] waits for Redis to answer at start.
const LOAD_PATIENCE: Duration = Duration::from_secs(10);

/// How long one attempt to connect may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long one command may wait for its answer.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(3);

/// The first wait before a write is tried again; it doubles, up to [`MAX_RETRY_DELAY`].
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(50);

/// The longest wait between two tries of a write.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(1);

/// What every room script starts with: its keys by name, and the helpers.
const PRELUDE: &str = r"
local setup, epoch, owner, log, snap, aside = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local function live()
  return redis.call('EXISTS', setup) == 1 and redis.call('EXISTS', aside) == 0
end
local function current()
  return tonumber(redis.call('GET', epoch) or '0')
end
local function snapshot_seq()
  return tonumber(redis.call('HGET', snap, 'seq') or '0')
end
local function last_seq()
  local seq = snapshot_seq()
  local newest = redis.call('XREVRANGE', log, '+', '-', 'COUNT', 1)
  if newest[1] then
    local logged = tonumber(string.match(newest[1][1], '^0%-(%d+)$') or '0')
    if logged > seq then seq = logged end
  end
  return seq
end
local function keep(ttl)
  for _, key in ipairs({setup, epoch, log, snap}) do redis.call('PEXPIRE', key, ttl) end
end
";

/// Create. ARGV: setup, ttl, and with a creator (`KEYS[7]`, the set of the codes of the rooms
/// created from its address, [`creator_key`]) the most it may have open and the code. The same
/// setup again (a retry whose first answer was lost) is accepted while nobody has claimed the
/// room. A creator whose rooms still open (set up, not yet expired or deleted) are as many as it
/// may have is refused (`4`); the set expires with its newest room's first expiry, so a room
/// kept alive by play for longer than that no longer counts.
const CREATE: &str = r"
if redis.call('EXISTS', setup) == 1 then
  if redis.call('EXISTS', aside) == 0 and current() == 0 and redis.call('GET', setup) == ARGV[1] then
    return {0, 0}
  end
  return {2, 0, 0}
end
local creator, most = KEYS[7], tonumber(ARGV[3] or '0')
if creator and most > 0 then
  -- The creator's rooms that have since ended or expired no longer count.
  for _, other in ipairs(redis.call('SMEMBERS', creator)) do
    if redis.call('EXISTS', 'dhumbal:room:{' .. other .. '}:setup') == 0 then
      redis.call('SREM', creator, other)
    end
  end
  local open = redis.call('SCARD', creator)
  if open >= most then return {4, open} end
  redis.call('SADD', creator, ARGV[4])
  redis.call('PEXPIRE', creator, ARGV[2])
end
redis.call('DEL', epoch, owner, log, snap, aside)
redis.call('SET', setup, ARGV[1], 'PX', ARGV[2])
redis.call('SET', epoch, '0', 'PX', ARGV[2])
return {0, 0}
";

/// Claim. ARGV: node, lease, ttl. Answers the new epoch.
const CLAIM: &str = r"
if not live() then return {3, 0} end
local now = redis.call('INCR', epoch)
redis.call('SET', owner, ARGV[1], 'PX', ARGV[2])
keep(ARGV[3])
return {0, now}
";

/// Append. ARGV: epoch, seq, entry id (`0-<seq>`), input, ttl, retry (`1` when this is a
/// second try: the seq already being the last means the first try landed).
const APPEND: &str = r"
if not live() then return {3, 0} end
local now = current()
if now ~= tonumber(ARGV[1]) then return {1, now} end
local last = last_seq()
local seq = tonumber(ARGV[2])
if seq == last and ARGV[6] == '1' then
  keep(ARGV[5])
  return {0, seq}
end
if seq ~= last + 1 then return {2, last, snapshot_seq()} end
redis.call('XADD', log, ARGV[3], 'e', ARGV[4])
keep(ARGV[5])
return {0, seq}
";

/// Snapshot. ARGV: epoch, seq, state, the first entry id to keep (`0-<seq + 1>`), ttl.
const SNAPSHOT: &str = r"
if not live() then return {3, 0} end
local now = current()
if now ~= tonumber(ARGV[1]) then return {1, now} end
local last = last_seq()
local at = snapshot_seq()
local seq = tonumber(ARGV[2])
if seq > last or seq < at then return {2, last, at} end
redis.call('HSET', snap, 'seq', ARGV[2], 'state', ARGV[3])
redis.call('XTRIM', log, 'MINID', ARGV[4])
keep(ARGV[5])
return {0, seq}
";

/// Renew the lease. ARGV: epoch, node, lease, ttl.
const RENEW: &str = r"
if not live() then return {3, 0} end
local now = current()
if now ~= tonumber(ARGV[1]) then return {1, now} end
redis.call('SET', owner, ARGV[2], 'PX', ARGV[3])
keep(ARGV[4])
return {0, now}
";

/// Release: the owner goes if the epoch is still ours. ARGV: epoch.
const RELEASE: &str = r"
if current() == tonumber(ARGV[1]) then redis.call('DEL', owner) end
return {0, 0}
";

/// Delete. ARGV: the epoch this node holds, or `-` for a room it does not hold.
const DELETE: &str = r"
if ARGV[1] ~= '-' and live() then
  local now = current()
  if now ~= tonumber(ARGV[1]) then return {1, now} end
end
redis.call('DEL', setup, epoch, owner, log, snap, aside)
return {0, 0}
";

/// Set aside: kept for good (no expiry), never claimed again. ARGV: why.
const SET_ASIDE: &str = r"
if redis.call('EXISTS', setup) == 0 then return {3, 0} end
redis.call('SET', aside, ARGV[1])
for _, key in ipairs({setup, epoch, log, snap}) do redis.call('PERSIST', key) end
redis.call('DEL', owner)
return {0, 0}
";

/// Keep a match's hand history unless one is kept. KEYS: the match's key. ARGV: commitment,
/// tokens, history, how long to keep it.
const KEEP_MATCH: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, 0} end
redis.call('HSET', KEYS[1], 'commitment', ARGV[1], 'tokens', ARGV[2], 'history', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {0, 1}
";

/// The scripts, each hashed once.
struct Scripts {
    /// [`CREATE`].
    create: Script,
    /// [`CLAIM`].
    claim: Script,
    /// [`APPEND`].
    append: Script,
    /// [`SNAPSHOT`].
    snapshot: Script,
    /// [`RENEW`].
    renew: Script,
    /// [`RELEASE`].
    release: Script,
    /// [`DELETE`].
    delete: Script,
    /// [`SET_ASIDE`].
    set_aside: Script,
    /// [`KEEP_MATCH`].
    keep_match: Script,
}

impl Scripts {
    fn new() -> Scripts {
        let room = |body: &str| Script::new(&format!("{PRELUDE}{body}"));
        Scripts {
            create: room(CREATE),
            claim: room(CLAIM),
            append: room(APPEND),
            snapshot: room(SNAPSHOT),
            renew: room(RENEW),
            release: room(RELEASE),
            delete: room(DELETE),
            set_aside: room(SET_ASIDE),
            keep_match: Script::new(KEEP_MATCH),
        }
    }
}

/// A script's answer.
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    /// Done; the number the script answered (the epoch of a claim, the seq of an append).
    Done(u64),
    /// The room's epoch is not the caller's: this one.
    Fenced(u64),
    /// Not the next seq: the last seq and the snapshot's.
    NotNext { last: u64, snapshot: u64 },
    /// No such live room.
    Unknown,
    /// The creator has as many rooms open as it may: this many.
    TooManyOpen(u64),
}

impl Reply {
    /// Reads `{status, …}`.
    fn read(values: &[i64]) -> Result<Reply, StoreError> {
        let at = |i: usize| values.get(i).map_or(0, |v| u64::try_from(*v).unwrap_or(0));
        match values.first() {
            Some(0) => Ok(Reply::Done(at(1))),
            Some(1) => Ok(Reply::Fenced(at(1))),
            Some(2) => Ok(Reply::NotNext {
                last: at(1),
                snapshot: at(2),
            }),
            Some(3) => Ok(Reply::Unknown),
            Some(4) => Ok(Reply::TooManyOpen(at(1))),
            _ => Err(StoreError::Conflict(format!(
                "a Redis script answered {values:?}, which this server does not know"
            ))),
        }
    }
}

/// The Redis store. Cheap to share: the connection multiplexes every room's commands.
pub struct RedisStore {
    /// What the write tasks share.
    inner: Arc<Inner>,
}

/// What every write task needs.
struct Inner {
    /// For the blocking connection of [`RedisStore::load`].
    client: Client,
    /// The connection, reconnected after a failure.
    conn: ConnectionManager,
    /// Where Redis is, who this node is, the lease and the expiries.
    config: RedisConfig,
    /// The epoch of each room this node has claimed (and not let go of since).
    held: Mutex<HashMap<String, u64>>,
    /// Claims, fenced appends, lease renewals, commits, errors and the append latency.
    metrics: Arc<Metrics>,
    /// Where the write tasks run.
    runtime: tokio::runtime::Handle,
    /// The write tasks, waited for by [`RedisStore::close`].
    tasks: TaskTracker,
    /// Set by [`RedisStore::close`]: writes after it answer [`StoreError::Closed`].
    closed: AtomicBool,
    /// The scripts.
    scripts: Scripts,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl From<RedisError> for StoreError {
    fn from(error: RedisError) -> StoreError {
        StoreError::Redis(Arc::new(error))
    }
}

/// The keys of room `code`: setup, epoch, owner, log, snapshot, aside (the order every room
/// script takes them in as `KEYS`).
pub fn room_keys(code: &str) -> [String; 6] {
    PARTS.map(|part| format!("dhumbal:room:{{{code}}}:{part}"))
}

/// The key of the set of the codes of the rooms created from `address` and still open (the
/// room-creation script keeps it; see [`super::Store::create_room_for`]).
pub fn creator_key(address: std::net::IpAddr) -> String {
    format!("dhumbal:creator:{address}")
}

/// The key of match `number` of room `code`.
pub fn match_key(code: &str, number: u32) -> String {
    format!("dhumbal:match:{{{code}}}:{number}")
}

/// The URL with its password replaced by `***`, for logs.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or("", |(user, _)| user);
            format!("{scheme}://{user}:***@{host}{}", &rest[authority_end..])
        }
        None => url.to_owned(),
    }
}

/// Milliseconds, for `PX` and `PEXPIRE` (at least 1).
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// Whether a failure is Redis being away for a moment (worth another try) rather than an
/// answer.
fn transient(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_timeout()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || matches!(
            error.retry_method(),
            RetryMethod::Reconnect | RetryMethod::WaitAndRetry | RetryMethod::RetryImmediately
        )
}

impl RedisStore {
    /// Checks the URL and sets up the connection, which is made when first used (and made
    /// again whenever it fails). Must be called inside a Tokio runtime: the writes run on it.
    pub fn open(config: RedisConfig, metrics: Arc<Metrics>) -> Result<RedisStore, StoreError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            RedisError::from((
                ::redis::ErrorKind::Client,
                "the Redis store is opened inside a Tokio runtime",
            ))
        })?;
        let client = Client::open(config.url.as_str())?;
        let settings = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(4)
            .set_max_delay(MAX_RETRY_DELAY);
        let conn = ConnectionManager::new_lazy_with_config(client.clone(), settings)?;
        info!(
            url = %redacted(&config.url),
            node = %config.node,
            lease = ?config.lease,
            "the room log is in Redis"
        );
        Ok(RedisStore {
            inner: Arc::new(Inner {
                client,
                conn,
                config,
                held: Mutex::default(),
                metrics,
                runtime,
                tasks: TaskTracker::new(),
                closed: AtomicBool::new(false),
                scripts: Scripts::new(),
            }),
        })
    }

    /// This node's id.
    pub fn node(&self) -> &str {
        &self.inner.config.node
    }

    /// The lease a claim holds for.
    pub fn lease(&self) -> Duration {
        self.inner.config.lease
    }

    /// Runs `op` as a task of its own from now, answering through a [`Pending`].
    fn write<F>(&self, op: F) -> Pending
    where
        F: Future<Output = Result<(), StoreError>> + Send + 'static,
    {
        if self.inner.closed.load(Ordering::Acquire) {
            return Pending::ready(Err(StoreError::Closed));
        }
        let (answer, answered) = oneshot::channel();
        let inner = Arc::clone(&self.inner);
        self.inner.tasks.spawn_on(
            async move {
                let result = op.await;
                inner.count(&result);
                let _ = answer.send(result);
            },
            &self.inner.runtime,
        );
        Pending::waiting(answered)
    }

    /// No rooms (each is claimed on demand), and the rooms set aside before. Blocks until Redis
    /// answers, for 10 s at most.
    pub fn load(&self) -> Result<Loaded, StoreError> {
        let deadline = Instant::now() + LOAD_PATIENCE;
        loop {
            match self.load_once() {
                Ok(loaded) => return Ok(loaded),
                Err(error) if transient(&error) && Instant::now() < deadline => {
                    warn!(%error, "Redis does not answer yet; trying again");
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// One try of [`RedisStore::load`].
    fn load_once(&self) -> Result<Loaded, RedisError> {
        let mut conn = self
            .inner
            .client
            .get_connection_with_timeout(CONNECT_TIMEOUT)?;
        conn.set_read_timeout(Some(RESPONSE_TIMEOUT))?;
        conn.set_write_timeout(Some(RESPONSE_TIMEOUT))?;
        let mut codes: Vec<String> = ::redis::cmd("SMEMBERS").arg(ASIDE_INDEX).query(&mut conn)?;
        codes.sort();
        let mut loaded = Loaded::default();
        for code in codes {
            let why: Option<String> = ::redis::cmd("GET")
                .arg(&room_keys(&code)[5])
                .query(&mut conn)?;
            match why {
                Some(why) => loaded.kept_aside.push((code, why)),
                None => {
                    let _: () = ::redis::cmd("SREM")
                        .arg(ASIDE_INDEX)
                        .arg(&code)
                        .query(&mut conn)?;
                }
            }
        }
        Ok(loaded)
    }

    /// See [`super::Store::create_room_for`] (and [`super::Store::create_room`], without a
    /// creator).
    pub fn create_room_for(
        &self,
        code: &str,
        setup: Vec<u8>,
        creator: Option<super::Creator>,
    ) -> Pending {
        let inner = Arc::clone(&self.inner);
        let code = code.to_owned();
        self.write(async move {
            let ttl = millis(inner.config.room_ttl).to_string().into_bytes();
            let mut keys = room_keys(&code).to_vec();
            let mut args = vec![setup, ttl];
            if let Some(creator) = creator {
                keys.push(creator_key(creator.address));
                args.push(creator.most.to_string().into_bytes());
                args.push(code.clone().into_bytes());
            }
            let reply = inner
                .keyed_script(&inner.scripts.create, &code, &keys, args, false)
                .await?;
            match reply {
                Reply::Done(_) => Ok(()),
                Reply::TooManyOpen(_) => Err(StoreError::TooManyOpen(
                    creator.map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |c| c.address),
                )),
                Reply::NotNext { .. } => Err(check::exists(&code)),
                other => Err(unexpected(&code, "create", &other)),
            }
        })
    }

    /// See [`super::Store::claim`].
    pub async fn claim(&self, code: &str) -> Result<Option<StoredRoom>, StoreError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        let inner = &self.inner;
        let args = vec![
            inner.config.node.clone().into_bytes(),
            millis(inner.config.lease).to_string().into_bytes(),
            millis(inner.config.room_ttl).to_string().into_bytes(),
        ];
        let epoch = match inner
            .room_script(&inner.scripts.claim, code, args, false)
            .await?
        {
            Reply::Done(epoch) => epoch,
            Reply::Unknown => return Ok(None),
            other => return Err(unexpected(code, "claim", &other)),
        };
        inner.held().insert(code.to_owned(), epoch);
        inner.metrics.claims.increment(1);
        info!(room = %code, epoch, node = %inner.config.node, "room claimed");
        // Reading after the claim is safe: any node that held the room before is fenced now.
        let read = inner.read_room(code).await;
        if !matches!(read, Ok(Some(_))) {
            inner.held().remove(code);
        }
        read
    }

    /// See [`super::Store::peek`].
    pub async fn peek(&self, code: &str) -> Result<Option<StoredRoom>, StoreError> {
        self.inner.read_room(code).await
    }

    /// See [`super::Store::append`].
    pub fn append(&self, code: &str, seq: u64, input: Vec<u8>) -> Pending {
        let Some(epoch) = self.inner.epoch(code) else {
            self.inner.metrics.fenced_appends.increment(1);
            return Pending::ready(Err(not_held(code)));
        };
        let inner = Arc::clone(&self.inner);
        let code = code.to_owned();
        self.write(async move {
            let started = Instant::now();
            let args = vec![
                epoch.to_string().into_bytes(),
                seq.to_string().into_bytes(),
                format!("0-{seq}").into_bytes(),
                input,
                millis(inner.config.room_ttl).to_string().into_bytes(),
                b"0".to_vec(),
            ];
            let reply = inner
                .room_script(&inner.scripts.append, &code, args, true)
                .await?;
            match reply {
                Reply::Done(_) => {
                    inner.metrics.store_appended(started.elapsed());
                    Ok(())
                }
                Reply::Fenced(now) => {
                    inner.metrics.fenced_appends.increment(1);
                    Err(fenced(&code, epoch, now))
                }
                Reply::NotNext { last, .. } => Err(check::next_seq(&code, last, seq)
                    .err()
                    .unwrap_or_else(|| unexpected(&code, "append", &reply))),
                Reply::Unknown => Err(StoreError::UnknownRoom(code)),
                Reply::TooManyOpen(_) => Err(unexpected(&code, "append", &reply)),
            }
        })
    }

    /// See [`super::Store::snapshot`].
    pub fn snapshot(&self, code: &str, seq: u64, state: Vec<u8>) -> Pending {
        let Some(epoch) = self.inner.epoch(code) else {
            return Pending::ready(Err(not_held(code)));
        };
        let inner = Arc::clone(&self.inner);
        let code = code.to_owned();
        self.write(async move {
            let args = vec![
                epoch.to_string().into_bytes(),
                seq.to_string().into_bytes(),
                state,
                format!("0-{}", seq.saturating_add(1)).into_bytes(),
                millis(inner.config.room_ttl).to_string().into_bytes(),
            ];
            let reply = inner
                .room_script(&inner.scripts.snapshot, &code, args, false)
                .await?;
            match reply {
                Reply::Done(_) => Ok(()),
                Reply::Fenced(now) => Err(fenced(&code, epoch, now)),
                Reply::NotNext { last, snapshot } => {
                    Err(check::snapshot_seq(&code, last, snapshot, seq)
                        .err()
                        .unwrap_or_else(|| unexpected(&code, "snapshot", &reply)))
                }
                Reply::Unknown => Err(StoreError::UnknownRoom(code)),
                Reply::TooManyOpen(_) => Err(unexpected(&code, "snapshot", &reply)),
            }
        })
    }

    /// See [`super::Store::renew`]. Tried once: the next renewal is the next try.
    pub async fn renew(&self, code: &str) -> Result<(), StoreError> {
        let inner = &self.inner;
        let Some(epoch) = inner.epoch(code) else {
            inner.metrics.lease_failures.increment(1);
            return Err(not_held(code));
        };
        let args = vec![
            epoch.to_string().into_bytes(),
            inner.config.node.clone().into_bytes(),
            millis(inner.config.lease).to_string().into_bytes(),
            millis(inner.config.room_ttl).to_string().into_bytes(),
        ];
        let reply = inner
            .script_once(&inner.scripts.renew, &room_keys(code), &args)
            .await;
        let result = match reply {
            Ok(Reply::Done(_)) => Ok(()),
            Ok(Reply::Fenced(now)) => Err(fenced(code, epoch, now)),
            Ok(Reply::Unknown) => Err(StoreError::Fenced {
                code: code.to_owned(),
                detail: "the room is no longer in the store".into(),
            }),
            Ok(other) => Err(unexpected(code, "renew", &other)),
            Err(error) => Err(error),
        };
        match &result {
            Ok(()) => inner.metrics.lease_renewals.increment(1),
            Err(_) => inner.metrics.lease_failures.increment(1),
        }
        result
    }

    /// See [`super::Store::release`].
    pub fn release(&self, code: &str) -> Pending {
        let Some(epoch) = self.inner.held().remove(code) else {
            return Pending::ready(Ok(()));
        };
        let inner = Arc::clone(&self.inner);
        let code = code.to_owned();
        self.write(async move {
            let args = vec![epoch.to_string().into_bytes()];
            inner
                .room_script(&inner.scripts.release, &code, args, false)
                .await?;
            Ok(())
        })
    }

    /// See [`super::Store::delete_room`].
    pub fn delete_room(&self, code: &str) -> Pending {
        let epoch = self.inner.held().remove(code);
        let inner = Arc::clone(&self.inner);
        let code = code.to_owned();
        self.write(async move {
            let held = epoch.map_or_else(|| "-".to_owned(), |epoch| epoch.to_string());
            let reply = inner
                .room_script(&inner.scripts.delete, &code, vec![held.into_bytes()], false)
                .await?;
            match reply {
                Reply::Done(_) => inner.aside_index("SREM", &code).await,
                Reply::Fenced(now) => Err(fenced(&code, epoch.unwrap_or(0), now)),
                other => Err(unexpected(&code, "delete", &other)),
            }
        })
    }

    /// See [`super::Store::set_aside`].
    pub fn set_aside(&self, code: &str, why: &str) -> Pending {
        self.inner.held().remove(code);
        let inner = Arc::clone(&self.inner);
        let code = code.to_owned();
        let why = why.as_bytes().to_vec();
        self.write(async move {
            let reply = inner
                .room_script(&inner.scripts.set_aside, &code, vec![why], false)
                .await?;
            match reply {
                Reply::Done(_) => inner.aside_index("SADD", &code).await,
                Reply::Unknown => Err(StoreError::UnknownRoom(code)),
                other => Err(unexpected(&code, "set aside", &other)),
            }
        })
    }

    /// See [`super::Store::keep_match`]: kept for `--keep-matches`, then Redis lets it expire.
    pub fn keep_match(&self, kept: KeptMatch) -> Pending {
        let inner = Arc::clone(&self.inner);
        self.write(async move {
            let key = [match_key(&kept.code, kept.number)];
            let args = [
                kept.commitment.into_bytes(),
                kept.token_hashes.join(" ").into_bytes(),
                kept.history.into_bytes(),
                millis(inner.config.keep_matches).to_string().into_bytes(),
            ];
            let values: Vec<i64> = inner
                .retrying(|conn| {
                    let mut conn = conn;
                    let mut call = inner.scripts.keep_match.prepare_invoke();
                    call.key(&key[0]);
                    for arg in &args {
                        call.arg(arg.as_slice());
                    }
                    async move { call.invoke_async(&mut conn).await }
                })
                .await?;
            match Reply::read(&values)? {
                Reply::Done(_) => Ok(()),
                other => Err(unexpected(&kept.code, "keep a match", &other)),
            }
        })
    }

    /// See [`super::Store::find_match`].
    pub async fn find_match(
        &self,
        code: &str,
        number: u32,
    ) -> Result<Option<KeptMatch>, StoreError> {
        let key = match_key(code, number);
        let fields: Vec<Option<String>> = self
            .inner
            .retrying(|conn| {
                let mut conn = conn;
                let key = &key;
                async move {
                    ::redis::cmd("HMGET")
                        .arg(key)
                        .arg("commitment")
                        .arg("tokens")
                        .arg("history")
                        .query_async(&mut conn)
                        .await
                }
            })
            .await?;
        let mut fields = fields.into_iter();
        let (Some(Some(commitment)), Some(Some(tokens)), Some(Some(history))) =
            (fields.next(), fields.next(), fields.next())
        else {
            return Ok(None);
        };
        Ok(Some(KeptMatch {
            code: code.to_owned(),
            number,
            commitment,
            token_hashes: tokens.split_whitespace().map(str::to_owned).collect(),
            history,
        }))
    }

    /// See [`super::Store::forget_matches`]: nothing to do, each hand history expires by
    /// itself.
    pub fn forget_matches(&self, _keep: Duration) -> Pending {
        Pending::ready(Ok(()))
    }

    /// Waits for the writes under way (a lease at most); writes after it answer
    /// [`StoreError::Closed`].
    pub async fn close(&self) {
        self.inner.closed.store(true, Ordering::Release);
        self.inner.tasks.close();
        let waited = tokio::time::timeout(self.inner.config.lease, self.inner.tasks.wait()).await;
        if waited.is_err() {
            warn!(
                writes = self.inner.tasks.len(),
                "Redis writes still under way when the store closed"
            );
        }
    }
}

impl Inner {
    /// The rooms this node holds, by code, with their epochs.
    fn held(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The epoch this node holds `code` at.
    fn epoch(&self, code: &str) -> Option<u64> {
        self.held().get(code).copied()
    }

    /// Counts a write's outcome.
    fn count(&self, result: &Result<(), StoreError>) {
        match result {
            Ok(()) => self.metrics.store_commits.increment(1),
            Err(StoreError::Fenced { .. }) => {}
            Err(_) => self.metrics.store_errors.increment(1),
        }
    }

    /// Adds room `code` to the index of rooms set aside (`SADD`) or takes it out (`SREM`),
    /// trying again for a lease while Redis is away.
    async fn aside_index(&self, command: &'static str, code: &str) -> Result<(), StoreError> {
        self.retrying(|mut conn| async move {
            ::redis::cmd(command)
                .arg(ASIDE_INDEX)
                .arg(code)
                .query_async::<()>(&mut conn)
                .await
        })
        .await?;
        Ok(())
    }

    /// Runs `attempt` (given a connection) until it answers,
    /// trying again for a lease while Redis is away.
    async fn retrying<T, F, Fut>(&self, attempt: F) -> Result<T, RedisError>
    where
        F: Fn(ConnectionManager) -> Fut,
        Fut: Future<Output = Result<T, RedisError>>,
    {
        let deadline = Instant::now() + self.config.lease;
        let mut delay = FIRST_RETRY_DELAY;
        loop {
            match attempt(self.conn.clone()).await {
                Ok(answer) => return Ok(answer),
                Err(error) if transient(&error) && Instant::now() + delay < deadline => {
                    warn!(%error, "Redis is away; trying again");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(MAX_RETRY_DELAY);
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Runs one of the room scripts on room `code`'s keys, trying again for a lease while Redis
    /// is away. With `retry_flag`, the last argument is set to `1` on every try after the first.
    async fn room_script(
        &self,
        script: &Script,
        code: &str,
        args: Vec<Vec<u8>>,
        retry_flag: bool,
    ) -> Result<Reply, StoreError> {
        self.keyed_script(script, code, &room_keys(code), args, retry_flag)
            .await
    }

    /// [`Inner::room_script`] with keys of the caller's: the room's, and more after them.
    async fn keyed_script(
        &self,
        script: &Script,
        code: &str,
        keys: &[String],
        mut args: Vec<Vec<u8>>,
        retry_flag: bool,
    ) -> Result<Reply, StoreError> {
        let deadline = Instant::now() + self.config.lease;
        let mut delay = FIRST_RETRY_DELAY;
        loop {
            match self.invoke(script, keys, &args).await {
                Ok(values) => return Reply::read(&values),
                Err(error) if transient(&error) && Instant::now() + delay < deadline => {
                    warn!(room = %code, %error, "Redis is away; trying the write again");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(MAX_RETRY_DELAY);
                    if retry_flag {
                        if let Some(last) = args.last_mut() {
                            *last = b"1".to_vec();
                        }
                    }
                }
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// Runs a room script once.
    async fn script_once(
        &self,
        script: &Script,
        keys: &[String],
        args: &[Vec<u8>],
    ) -> Result<Reply, StoreError> {
        let values = self.invoke(script, keys, args).await?;
        Reply::read(&values)
    }

    /// One `EVALSHA` (or `EVAL` after a restart of Redis forgot the script).
    async fn invoke(
        &self,
        script: &Script,
        keys: &[String],
        args: &[Vec<u8>],
    ) -> Result<Vec<i64>, RedisError> {
        let mut call = script.prepare_invoke();
        for key in keys {
            call.key(key);
        }
        for arg in args {
            call.arg(arg.as_slice());
        }
        let mut conn = self.conn.clone();
        call.invoke_async(&mut conn).await
    }

    /// The room's log as committed: read in one `MULTI` so that the snapshot and the inputs
    /// after it agree. `None` for no live room; [`StoreError::Conflict`] for a log with a gap.
    async fn read_room(&self, code: &str) -> Result<Option<StoredRoom>, StoreError> {
        let keys = room_keys(code);
        type Read = (
            Option<Vec<u8>>,
            bool,
            Option<u64>,
            Option<Vec<u8>>,
            Vec<(String, Vec<Vec<u8>>)>,
        );
        let (setup, aside, snapshot_seq, snapshot_state, entries): Read = self
            .retrying(|conn| {
                let keys = &keys;
                async move {
                    let mut conn = conn;
                    ::redis::pipe()
                        .atomic()
                        .get(&keys[0])
                        .exists(&keys[5])
                        .hget(&keys[4], "seq")
                        .hget(&keys[4], "state")
                        .cmd("XRANGE")
                        .arg(&keys[3])
                        .arg("-")
                        .arg("+")
                        .query_async(&mut conn)
                        .await
                }
            })
            .await?;
        let Some(setup) = setup else {
            return Ok(None);
        };
        if aside {
            return Ok(None);
        }
        let snapshot = snapshot_seq.zip(snapshot_state);
        let after = snapshot.as_ref().map_or(0, |(seq, _)| *seq);
        let damaged = |why: String| StoreError::Conflict(format!("room {code}: {why}"));
        let mut inputs = Vec::with_capacity(entries.len());
        for (id, fields) in entries {
            let seq: u64 = id
                .strip_prefix("0-")
                .and_then(|seq| seq.parse().ok())
                .ok_or_else(|| damaged(format!("its log has an entry {id}")))?;
            if seq <= after {
                continue;
            }
            let [field, input]: [Vec<u8>; 2] = fields
                .try_into()
                .map_err(|_| damaged(format!("its log's entry {id} is not one input")))?;
            if field != b"e" {
                return Err(damaged(format!("its log's entry {id} is not an input")));
            }
            inputs.push((seq, input));
        }
        for (expected, (seq, _)) in (after + 1..).zip(&inputs) {
            if *seq != expected {
                return Err(damaged(format!(
                    "input {expected} is missing from its log (the next logged input is {seq})"
                )));
            }
        }
        Ok(Some(StoredRoom {
            code: code.to_owned(),
            setup,
            snapshot,
            inputs,
        }))
    }
}

/// The answer to a write about a room this node does not hold.
fn not_held(code: &str) -> StoreError {
    StoreError::Fenced {
        code: code.to_owned(),
        detail: "this node has not claimed it".into(),
    }
}

/// The answer to a write whose epoch is not the room's.
fn fenced(code: &str, held: u64, now: u64) -> StoreError {
    warn!(room = %code, held, now, "a write was fenced off: another node has claimed the room");
    StoreError::Fenced {
        code: code.to_owned(),
        detail: format!("this node claimed it at epoch {held}; it is at epoch {now}"),
    }
}

/// A script's answer that does not fit what was asked.
fn unexpected(code: &str, what: &str, reply: &Reply) -> StoreError {
    StoreError::Conflict(format!("room {code}: Redis answered {reply:?} to a {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_logged_without_their_password() {
        assert_eq!(
            redacted("redis://user:secret@db:6379/2"),
            "redis://user:***@db:6379/2"
        );
        assert_eq!(redacted("redis://:secret@db"), "redis://:***@db");
        assert_eq!(redacted("redis://db:6379"), "redis://db:6379");
    }

    #[test]
    fn a_rooms_keys_share_its_hash_tag() {
        let keys = room_keys("ABCD");
        assert_eq!(keys[0], "dhumbal:room:{ABCD}:setup");
        assert_eq!(keys[3], "dhumbal:room:{ABCD}:log");
        assert!(keys.iter().all(|key| key.contains("{ABCD}")));
        assert_eq!(match_key("ABCD", 3), "dhumbal:match:{ABCD}:3");
    }

    #[test]
    fn script_answers_are_read() {
        assert_eq!(Reply::read(&[0, 7]).unwrap(), Reply::Done(7));
        assert_eq!(Reply::read(&[1, 4]).unwrap(), Reply::Fenced(4));
        assert_eq!(
            Reply::read(&[2, 9, 5]).unwrap(),
            Reply::NotNext {
                last: 9,
                snapshot: 5
            }
        );
        assert_eq!(Reply::read(&[3, 0]).unwrap(), Reply::Unknown);
        assert!(Reply::read(&[]).is_err());
    }
}
