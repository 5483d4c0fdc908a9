// DynamoDB Local listening on 127.0.0.1 only: its command line has no bind address, and its Jetty server listens
// on every interface. This launcher (run by `java` as a source file, with DynamoDBLocal.jar on the class path)
// builds the server from the usual arguments, gives its connectors the loopback address, and starts it.
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class LoopbackDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        for (Connector connector : ((Server) field.get(proxy)).getConnectors()) {
            ((ServerConnector) connector).setHost("127.0.0.1");
        }
        proxy.start();
    }
}
