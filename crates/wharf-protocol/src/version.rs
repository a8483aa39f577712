//! Protocol revisions: which ones exist, which era each belongs to, and what each one allows on the wire.

use std::fmt;

/// The two ways a client and a server talk, each a family of revisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2024-11-05 to 2025-11-25: the client opens a session with `initialize`, and the revision
    /// it negotiates applies to every request of the session.
    Session,
    /// 2026-07-28: every request stands alone and names its revision and the client's
    /// capabilities in `_meta`.
    Stateless,
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Era::Session => "session",
            Era::Stateless => "stateless",
        })
    }
}

/// A revision of the Model Context Protocol, named by its release date.
///
/// Revisions up to and including 2025-11-25 are *session-based*: a client opens a session with
/// `initialize` and the negotiated revision applies to the whole session. 2026-07-28 is
/// *stateless*: every request names its revision in `_meta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first public revision.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, tool annotations, audio, JSON-RPC batches.
    V2025_03_26,
    /// 2025-06-18: structured tool output, elicitation, resource links, titles.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, experimental tasks, validation errors as tool results.
    V2025_11_25,
    /// 2026-07-28: the stateless revision with per-request `_meta`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision Wharf serves, newest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2024_11_05,
    ];

    /// The newest revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest revision that uses `initialize` and sessions.
    pub const LATEST_SESSION: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Parses a revision string such as `"2025-06-18"`.
    pub fn parse(text: &str) -> Option<ProtocolVersion> {
        Self::parse_bytes(text.as_bytes())
    }

    /// [`ProtocolVersion::parse`] of bytes as a header gives them: bytes equal to a revision's
    /// name are that name, so they need not be read as text first.
    pub fn parse_bytes(bytes: &[u8]) -> Option<ProtocolVersion> {
        Self::ALL.into_iter().find(|version| version.as_str().as_bytes() == bytes)
    }

    /// The revision as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The era the revision belongs to: stateless for 2026-07-28, sessions before.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Stateless,
            _ => Era::Session,
        }
    }

    /// True where JSON-RPC batches must be accepted (only 2025-03-26).
    pub const fn allows_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// True where `title` fields exist on tools, prompts and resources.
    pub fn has_titles(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// True where icons, tool `execution` and `Implementation.description` exist.
    pub fn has_icons(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }

    /// True where `outputSchema` and `structuredContent` exist.
    pub fn has_structured_output(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// True where invalid tool arguments are reported as a tool result with `isError: true`
    /// instead of a JSON-RPC `-32602` error (SEP-1303).
    pub fn tool_input_errors_are_results(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }

    /// True where audio content exists.
    pub fn has_audio(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// True where tools carry annotations (read-only, destructive, ... hints).
    pub fn has_tool_annotations(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::{Era, ProtocolVersion};

    #[test]
    fn every_revision_parses_back_from_its_string() {
        for version in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(version.as_str()), Some(version));
            assert_eq!(ProtocolVersion::parse_bytes(version.as_str().as_bytes()), Some(version));
        }
        assert_eq!(ProtocolVersion::parse("2025-13-01"), None);
        assert_eq!(ProtocolVersion::parse_bytes(b"2025-11-25\xff"), None);
        assert_eq!(ProtocolVersion::parse_bytes(b""), None);
    }

    #[test]
    fn revisions_are_ordered_by_date() {
        assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::V2026_07_28);
        assert!(ProtocolVersion::LATEST_SESSION < ProtocolVersion::LATEST);
        assert_eq!(ProtocolVersion::LATEST_SESSION.era(), Era::Session);
    }
}
