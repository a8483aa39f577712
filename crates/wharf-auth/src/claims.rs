//! The claims of an access token (RFC 9068 §2.2, RFC 8693 §4.2), checked for this resource:
//! the issuer, the audience, the time window with a small leeway, and the scopes it grants;
//! what passes becomes the request's [`Principal`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use wharf_protocol::JsonObject;
use wharf_server::Principal;

use crate::resource::ResourceUrl;

/// What a token must show to be accepted here.
#[derive(Debug, Clone)]
pub(crate) struct Expected<'a> {
    pub(crate) issuer: &'a str,
    pub(crate) audiences: &'a [ResourceUrl],
    pub(crate) leeway: Duration,
    /// JWTs must carry `exp`; an introspection answer may leave it out (RFC 7662 §2.2).
    pub(crate) expiry_required: bool,
}

/// Why the claims were refused: said in the challenge's `error_description`, so it never
/// repeats a claim's value.
pub(crate) type Refusal = &'static str;

/// The principal the claims describe, if they are for this resource and valid now.
pub(crate) fn principal(claims: JsonObject, expected: &Expected<'_>, now: SystemTime) -> Result<Principal, Refusal> {
    let text = |name: &str| claims.get(name).and_then(Value::as_str);
    if text("iss") != Some(expected.issuer) {
        return Err("the token is from another issuer");
    }
    let audience_matches = match claims.get("aud") {
        Some(Value::String(audience)) => expected.audiences.iter().any(|resource| resource.is_named_by(audience)),
        Some(Value::Array(audiences)) => audiences
            .iter()
            .filter_map(Value::as_str)
            .any(|audience| expected.audiences.iter().any(|resource| resource.is_named_by(audience))),
        _ => false,
    };
    if !audience_matches {
        return Err("the token is for another resource");
    }
    let now = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    // RFC 7519 §4.1.4-6: each time is a NumericDate. One of another type is refused, not
    // ignored: a time window the token states must hold.
    let [expiry, not_before, issued] = ["exp", "nbf", "iat"].map(|name| claims.get(name));
    let seconds = |value: Option<&Value>, refusal: Refusal| match value {
        None => Ok(None),
        Some(value) => value.as_f64().map(Some).ok_or(refusal),
    };
    let expiry = seconds(expiry, "the token's exp is not a number")?;
    let not_before = seconds(not_before, "the token's nbf is not a number")?;
    let issued = seconds(issued, "the token's iat is not a number")?;
    let leeway = expected.leeway.as_secs_f64();
    match expiry {
        None if expected.expiry_required => return Err("the token has no expiry"),
        None => {}
        Some(expiry) if now.as_secs_f64() >= expiry + leeway => return Err("the token has expired"),
        Some(_) => {}
    }
    if not_before.is_some_and(|not_before| now.as_secs_f64() + leeway < not_before) {
        return Err("the token is not valid yet");
    }
    if issued.is_some_and(|issued| now.as_secs_f64() + leeway < issued) {
        return Err("the token was issued in the future");
    }
    let Some(subject) = text("sub").filter(|subject| !subject.is_empty()) else {
        return Err("the token names no subject");
    };
    let mut principal = Principal::issued(expected.issuer, subject).with_scopes(scopes(&claims));
    if let Some(client) = text("client_id").or_else(|| text("azp")) {
        principal = principal.with_client_id(client);
    }
    Ok(principal.with_claims(claims))
}

/// The scopes granted: `scope` (a space-separated string, RFC 9068 §2.2.3), or `scp` (a list
/// or a string, as some providers write it).
fn scopes(claims: &JsonObject) -> Vec<String> {
    let listed = |value: &Value| match value {
        Value::String(scopes) => scopes.split(' ').filter(|scope| !scope.is_empty()).map(str::to_owned).collect(),
        Value::Array(scopes) => scopes.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    claims.get("scope").or_else(|| claims.get("scp")).map(listed).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ISSUER: &str = "https://id.example.com/realms/main";
    const NOW: u64 = 1_800_000_000;

    fn check(claims: Value) -> Result<Principal, Refusal> {
        let audiences = [ResourceUrl::parse("https://mcp.example.com/mcp").unwrap()];
        let expected =
            Expected { issuer: ISSUER, audiences: &audiences, leeway: Duration::from_secs(30), expiry_required: true };
        let Value::Object(claims) = claims else { unreachable!() };
        principal(claims, &expected, UNIX_EPOCH + Duration::from_secs(NOW))
    }

    fn valid() -> Value {
        json!({"iss": ISSUER, "sub": "ann", "aud": "https://mcp.example.com/mcp", "exp": NOW + 60, "iat": NOW - 5,
               "scope": "files:read mcp", "client_id": "cli"})
    }

    fn with(change: impl FnOnce(&mut Value)) -> Result<Principal, Refusal> {
        let mut claims = valid();
        change(&mut claims);
        check(claims)
    }

    #[test]
    fn valid_claims_make_a_principal_with_its_scopes_and_client() {
        let principal = check(valid()).unwrap();
        assert_eq!(principal, Principal::issued(ISSUER, "ann"));
        assert_eq!(principal.scopes().collect::<Vec<_>>(), ["files:read", "mcp"]);
        assert_eq!(principal.client_id(), Some("cli"));
        assert_eq!(principal.claims().unwrap()["sub"], "ann");
        let listed = with(|claims| {
            claims.as_object_mut().unwrap().remove("scope");
            claims["scp"] = json!(["a", "b"]);
            claims["aud"] = json!(["https://other.example", "https://mcp.example.com/mcp/"]);
        });
        assert_eq!(listed.unwrap().scopes().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn claims_for_another_issuer_resource_or_time_are_refused() {
        assert_eq!(with(|c| c["iss"] = json!("https://id.example.com")), Err("the token is from another issuer"));
        assert_eq!(with(|c| c["aud"] = json!("https://mcp.example.com")), Err("the token is for another resource"));
        assert_eq!(
            with(|c| c["aud"] = json!(["https://mcp.example.com/mcp2"])),
            Err("the token is for another resource")
        );
        assert_eq!(
            with(|c| {
                c.as_object_mut().unwrap().remove("aud");
            }),
            Err("the token is for another resource")
        );
        assert_eq!(with(|c| c["exp"] = json!(NOW - 31)), Err("the token has expired"));
        assert!(with(|c| c["exp"] = json!(NOW - 29)).is_ok(), "within the leeway");
        assert_eq!(
            with(|c| {
                c.as_object_mut().unwrap().remove("exp");
            }),
            Err("the token has no expiry")
        );
        assert_eq!(with(|c| c["nbf"] = json!(NOW + 31)), Err("the token is not valid yet"));
        assert_eq!(with(|c| c["iat"] = json!(NOW + 300)), Err("the token was issued in the future"));
        assert_eq!(with(|c| c["sub"] = json!("")), Err("the token names no subject"));
        // A time of another type than a number is refused, as a missing `exp` is (issue 38).
        assert_eq!(with(|c| c["nbf"] = json!("tomorrow")), Err("the token's nbf is not a number"));
        assert_eq!(with(|c| c["exp"] = json!("never")), Err("the token's exp is not a number"));
        assert_eq!(with(|c| c["iat"] = json!(null)), Err("the token's iat is not a number"));
    }
}
