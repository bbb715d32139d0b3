//! The HTTP client of every store: `object_store`'s own (reqwest), with
//! one change: an answer of 501 (Not Implemented) is an error that is
//! never retried. `object_store` retries every 5xx, but a server that does
//! not implement a method (`PROPFIND` to list, `PUT` to write, on a plain
//! HTTP server) will not implement it on the tenth try either.

use std::future::Future;
use std::pin::Pin;

use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpService,
    ReqwestConnector,
};
use object_store::ClientOptions;

/// Makes the clients: reqwest's, behind [`Refuse501`].
#[derive(Debug, Default)]
pub(super) struct Connector;

impl HttpConnector for Connector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(Refuse501(inner)))
    }
}

/// A client whose 501 answers are errors of a kind `object_store` does not
/// retry.
#[derive(Debug)]
struct Refuse501(HttpClient);

/// What a 501 answer becomes (the server's page is left out).
fn not_implemented(method: &str) -> HttpError {
    HttpError::new(
        HttpErrorKind::Unknown,
        std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            format!("the server does not implement {method} (HTTP 501 Not Implemented)"),
        ),
    )
}

// What `#[async_trait]` would write (the crate is not a dependency).
impl HttpService for Refuse501 {
    fn call<'life0, 'async_trait>(
        &'life0 self,
        req: HttpRequest,
    ) -> Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move {
            let method = req.method().to_string();
            let response = self.0.execute(req).await?;
            if response.status().as_u16() == 501 {
                return Err(not_implemented(&method));
            }
            Ok(response)
        })
    }
}
