//! A store's client: made from the URL's store and the options, with the
//! environment's credentials or the instance metadata endpoint's.

use std::sync::Arc;

use object_store::{ClientConfigKey, ObjectStore, ObjectStoreScheme};

use super::connector;
use super::errors::{one_line, retried, seconds};
use super::options::{invalid, StorageOptions, READ_TIMEOUT};
use super::wait::{Failed, Failure};
use crate::error::Error;

/// What a client is made from: the URL's store (scheme and authority) and
/// the options. Clients are kept per key in the process.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct StoreKey {
    pub(super) base: Arc<str>,
    pub(super) options: StorageOptions,
}

/// A store's client, and where its credentials come from when that is the
/// instance metadata endpoint.
#[derive(Clone)]
pub(crate) struct Client {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(super) instance: Option<Arc<Instance>>,
}

/// An S3 store without credentials of its own: it asks `endpoint`.
pub(super) struct Instance {
    pub(super) provider: object_store::aws::AwsCredentialProvider,
    pub(super) endpoint: String,
}

/// The error of an S3 store that found no credentials: where they would
/// come from, and what the instance metadata endpoint (the last place
/// looked) said.
pub(super) fn no_credentials(endpoint: &str, failure: &Failure) -> Error {
    let why = match &failure.failed {
        Failed::TimedOut => format!("it gave no answer in {}", seconds(failure.elapsed)),
        Failed::Store(e) => retried(e).0,
        Failed::Ready(e) => e.to_string(),
    };
    Error::io(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!(
            "no AWS credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \
             (or the storage options aws_access_key_id and aws_secret_access_key; \
             AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, and \
             AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, are read too, ~/.aws profiles and \
             AWS_PROFILE are not), or aws_skip_signature=true for a public bucket; \
             the instance metadata endpoint {endpoint} gave none: {why}"
        ),
    ))
}

/// Where a store builder's credentials come from, when that is the
/// instance metadata endpoint (none given, and signing not skipped): the
/// endpoint.
fn instance_endpoint(b: &object_store::aws::AmazonS3Builder) -> Option<String> {
    use object_store::aws::AmazonS3ConfigKey as K;
    let set = |key: K| b.get_config_value(&key).is_some_and(|v| !v.is_empty());
    let given = set(K::AccessKeyId)
        || set(K::SecretAccessKey)
        || (set(K::WebIdentityTokenFile) && set(K::RoleArn))
        || set(K::ContainerCredentialsRelativeUri)
        || set(K::ContainerCredentialsFullUri)
        || b.get_config_value(&K::SkipSignature)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    (!given).then(|| {
        b.get_config_value(&K::MetadataEndpoint)
            .unwrap_or_else(|| "http://169.254.169.254".to_string())
    })
}

/// Makes the client of `key`: the store's builder from the environment,
/// then recordwire's defaults, the URL, then the options (an unknown key
/// is an error).
pub(super) fn make_store(key: &StoreKey) -> Result<Client, Error> {
    let url = url::Url::parse(&key.base).map_err(|e| invalid(format!("not a URL: {e}")))?;
    let (scheme, _) = ObjectStoreScheme::parse(&url)
        .map_err(|e| invalid(format!("not a URL of a store: {e}")))?;
    let (_, retry) = key.options.tuning()?;
    let unknown = |k: &str| invalid(format!("unknown storage option {:?} for this store", k));
    // The same steps for each store's builder (their config key types
    // differ). `read_timeout` has no default in object_store: recordwire's
    // applies unless the environment or the options give one.
    macro_rules! configure {
        ($builder:expr, $env_read_timeout:expr) => {{
            let mut b = $builder.with_http_connector(connector::Connector);
            if !$env_read_timeout {
                let k = "read_timeout"
                    .parse()
                    .map_err(|_| unknown("read_timeout"))?;
                b = b.with_config(k, READ_TIMEOUT);
            }
            for (k, v) in key.options.store_pairs() {
                b = b.with_config(k.parse().map_err(|_| unknown(k))?, v);
            }
            b.with_retry(retry)
        }};
    }
    let read_timeout = ClientConfigKey::ReadTimeout;
    let built = |e: object_store::Error| invalid(one_line(&e));
    let url_text = url.as_str();
    let client = match scheme {
        ObjectStoreScheme::AmazonS3 => {
            use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
            let b = AmazonS3Builder::from_env().with_url(url_text);
            let env = b.get_config_value(&AmazonS3ConfigKey::Client(read_timeout));
            let b = configure!(b, env.is_some());
            let endpoint = instance_endpoint(&b);
            let s3 = b.build().map_err(built)?;
            let instance = endpoint.map(|endpoint| {
                Arc::new(Instance {
                    provider: Arc::clone(s3.credentials()),
                    endpoint,
                })
            });
            Client {
                store: Arc::new(s3),
                instance,
            }
        }
        ObjectStoreScheme::GoogleCloudStorage => {
            use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
            let b = GoogleCloudStorageBuilder::from_env().with_url(url_text);
            let env = b.get_config_value(&GoogleConfigKey::Client(read_timeout));
            let b = configure!(b, env.is_some());
            Client {
                store: Arc::new(b.build().map_err(built)?),
                instance: None,
            }
        }
        ObjectStoreScheme::MicrosoftAzure => {
            use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
            let b = MicrosoftAzureBuilder::from_env().with_url(url_text);
            let env = b.get_config_value(&AzureConfigKey::Client(read_timeout));
            let b = configure!(b, env.is_some());
            Client {
                store: Arc::new(b.build().map_err(built)?),
                instance: None,
            }
        }
        ObjectStoreScheme::Http => {
            let b = configure!(
                object_store::http::HttpBuilder::new().with_url(url_text),
                false
            );
            Client {
                store: Arc::new(b.build().map_err(built)?),
                instance: None,
            }
        }
        other => {
            return Err(invalid(format!(
                "{other:?} URLs are not read as remote objects"
            )))
        }
    };
    Ok(client)
}
