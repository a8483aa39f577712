//! How the commands answer a server's questions: they declare elicitation and sampling, so
//! that servers which ask can be used and checked, then decline elicitation and refuse sampling
//! (no person or model is at hand), saying so on stderr.

use wharf::client::{Answer, ClientHandler};
use wharf::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    ElicitationCapability, ErrorCode, ErrorObject, SamplingCapability,
};

/// Declines every question.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declining {
    /// Whether to say on stderr what was declined.
    pub(crate) tell: bool,
}

/// What a client that answers elicitation and sampling declares (and `wharf check` too).
pub(crate) fn answering_capabilities() -> ClientCapabilities {
    ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        sampling: Some(SamplingCapability::default()),
        ..ClientCapabilities::default()
    }
}

impl ClientHandler for Declining {
    fn capabilities(&self) -> ClientCapabilities {
        answering_capabilities()
    }

    fn elicit(&self, params: ElicitParams) -> Answer<'_, ElicitResult> {
        if self.tell {
            eprintln!("wharf: the server asked \"{}\"; declined (no one to answer here)", params.message);
        }
        Box::pin(async { Ok(ElicitResult { action: ElicitAction::Decline, content: None, meta: None }) })
    }

    fn create_message(&self, _params: CreateMessageParams) -> Answer<'_, CreateMessageResult> {
        if self.tell {
            eprintln!("wharf: the server asked for a completion from the client's model; refused (no model here)");
        }
        Box::pin(async {
            Err(ErrorObject::new(ErrorCode(-1), "the user refused the sampling request (wharf has no model)"))
        })
    }
}
