package provider

// Environment variables read when the matching attribute is not set. They stand apart from the
// schema because the settings, the authentication and the wording of failures all name them.
const (
	EnvEndpoint   = "RABBITMQ_ENDPOINT"
	EnvAMQP       = "RABBITMQ_AMQP_ENDPOINT"
	EnvUsername   = "RABBITMQ_USERNAME"
	EnvPassword   = "RABBITMQ_PASSWORD"
	EnvVhost      = "RABBITMQ_VHOST"
	EnvInsecure   = "RABBITMQ_INSECURE"
	EnvCACert     = "RABBITMQ_CACERT"
	EnvClientCert = "RABBITMQ_CLIENTCERT"
	EnvClientKey  = "RABBITMQ_CLIENTKEY"

	EnvBearerToken        = "RABBITMQ_BEARER_TOKEN"
	EnvOAuth2TokenURL     = "RABBITMQ_OAUTH2_TOKEN_URL"
	EnvOAuth2ClientID     = "RABBITMQ_OAUTH2_CLIENT_ID"
	EnvOAuth2ClientSecret = "RABBITMQ_OAUTH2_CLIENT_SECRET"
)
