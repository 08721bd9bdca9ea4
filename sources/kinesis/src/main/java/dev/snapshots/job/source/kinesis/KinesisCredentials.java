package dev.snapshots.job.source.kinesis;

import java.net.URI;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ContainerCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.SystemPropertyCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.profiles.ProfileFile;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sts.StsClient;
import software.amazon.awssdk.services.sts.StsClientBuilder;
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider;
import software.amazon.awssdk.services.sts.auth.StsWebIdentityTokenFileCredentialsProvider;

/**
 * The Kinesis client's credentials, read from the connector's {@code aws.*} properties with the
 * keys and values of Flink's own Kinesis connector ({@code aws.credentials.provider} and the keys
 * under it), and with what ECS and EKS need that it lacks: {@code CONTAINER} (the ECS task's role),
 * a base provider for {@code ASSUME_ROLE} that may itself be any of these, and the STS endpoint for
 * {@code WEB_IDENTITY_TOKEN} too. The other values mean what they mean to Flink's connector
 * (flink-connector-aws-base's AWSGeneralUtil), built here on the AWS SDK v2 itself: no connector
 * built for Flink 1.x is needed.
 */
final class KinesisCredentials {
    static final String PROVIDER = "aws.credentials.provider";
    private static final Set<String> OURS =
            Set.of("CONTAINER", "ASSUME_ROLE", "WEB_IDENTITY_TOKEN");
    private static final Set<String> FLINKS =
            Set.of("AUTO", "BASIC", "ENV_VAR", "SYS_PROP", "PROFILE", "CUSTOM");

    private KinesisCredentials() {}

    /**
     * Refuses, before the job runs, what cannot work: an unknown provider, or an assumed role
     * without its ARN or session name. A web identity's role and token file may come from the
     * TaskManagers' environment (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE), so they are not
     * required here.
     */
    static void validate(Properties aws) {
        validate(aws, PROVIDER);
    }

    private static void validate(Properties aws, String key) {
        String type = type(aws, key);
        if (!OURS.contains(type) && !FLINKS.contains(type)) {
            Set<String> known = new TreeSet<>(OURS);
            known.addAll(FLINKS);
            throw new IllegalArgumentException(
                    key + " '" + type + "' is not a credentials provider; one of " + known);
        }
        if (type.equals("ASSUME_ROLE")) {
            for (String needed : new String[] {".role.arn", ".role.sessionName"}) {
                if (aws.getProperty(key + needed) == null) {
                    throw new IllegalArgumentException(key + " ASSUME_ROLE needs " + key + needed);
                }
            }
            validate(aws, key + ".role.provider");
        }
    }

    /** The provider {@code aws} names, for a client that lives as long as its reader. */
    static AwsCredentialsProvider provider(Properties aws) {
        return provider(aws, PROVIDER);
    }

    private static AwsCredentialsProvider provider(Properties aws, String key) {
        return switch (type(aws, key)) {
            case "CONTAINER" -> ContainerCredentialsProvider.builder().build();
            case "ASSUME_ROLE" ->
                    StsAssumeRoleCredentialsProvider.builder()
                            .stsClient(sts(aws, key, provider(aws, key + ".role.provider")))
                            .refreshRequest(
                                    r ->
                                            r.roleArn(aws.getProperty(key + ".role.arn"))
                                                    .roleSessionName(
                                                            aws.getProperty(
                                                                    key + ".role.sessionName"))
                                                    .externalId(
                                                            aws.getProperty(
                                                                    key + ".role.externalId")))
                            .build();
            // Unset, the role, token file and session name come from AWS_ROLE_ARN,
            // AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_SESSION_NAME, as EKS sets them.
            case "WEB_IDENTITY_TOKEN" ->
                    StsWebIdentityTokenFileCredentialsProvider.builder()
                            .stsClient(sts(aws, key, AnonymousCredentialsProvider.create()))
                            .roleArn(aws.getProperty(key + ".role.arn"))
                            .roleSessionName(aws.getProperty(key + ".role.sessionName"))
                            .webIdentityTokenFile(
                                    Optional.ofNullable(
                                                    aws.getProperty(key + ".webIdentityToken.file"))
                                            .map(Path::of)
                                            .orElse(null))
                            .build();
            case "BASIC" ->
                    () ->
                            AwsBasicCredentials.create(
                                    aws.getProperty(key + ".basic.accesskeyid"),
                                    aws.getProperty(key + ".basic.secretkey"));
            case "ENV_VAR" -> EnvironmentVariableCredentialsProvider.create();
            case "SYS_PROP" -> SystemPropertyCredentialsProvider.create();
            case "PROFILE" -> {
                ProfileCredentialsProvider.Builder profile =
                        ProfileCredentialsProvider.builder()
                                .profileName(aws.getProperty(key + ".profile.name"));
                Optional.ofNullable(aws.getProperty(key + ".profile.path"))
                        .map(
                                path ->
                                        ProfileFile.builder()
                                                .type(ProfileFile.Type.CREDENTIALS)
                                                .content(Path.of(path))
                                                .build())
                        .ifPresent(profile::profileFile);
                yield profile.build();
            }
            case "CUSTOM" -> custom(aws, key + ".custom.class");
            default -> DefaultCredentialsProvider.builder().build();
        };
    }

    /** A class of the user's, with a public constructor that takes the {@code aws} properties. */
    private static AwsCredentialsProvider custom(Properties aws, String key) {
        String name = aws.getProperty(key);
        if (name == null) {
            throw new IllegalArgumentException(
                    "CUSTOM credentials need the class's name in " + key);
        }
        try {
            return (AwsCredentialsProvider)
                    Class.forName(name).getDeclaredConstructor(Properties.class).newInstance(aws);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException(
                    key
                            + " "
                            + name
                            + " must be an "
                            + AwsCredentialsProvider.class.getName()
                            + " with a public constructor taking java.util.Properties",
                    e);
        }
    }

    /** {@code aws.region}, which the table factory and the job always set. */
    static Region region(Properties aws) {
        return Region.of(aws.getProperty("aws.region"));
    }

    /** STS in the stream's region, or at {@code KEY.role.stsEndpoint}, signed by {@code caller}. */
    private static StsClient sts(Properties aws, String key, AwsCredentialsProvider caller) {
        StsClientBuilder sts =
                StsClient.builder()
                        .region(region(aws))
                        .credentialsProvider(caller)
                        .httpClientBuilder(ApacheHttpClient.builder());
        Optional.ofNullable(aws.getProperty(key + ".role.stsEndpoint"))
                .map(URI::create)
                .ifPresent(sts::endpointOverride);
        return sts.build();
    }

    /** Unset, BASIC if its keys are there (as in Flink's connector), else AUTO. */
    private static String type(Properties aws, String key) {
        boolean basic =
                aws.containsKey(key + ".basic.accesskeyid")
                        && aws.containsKey(key + ".basic.secretkey");
        return aws.getProperty(key, basic ? "BASIC" : "AUTO");
    }
}
