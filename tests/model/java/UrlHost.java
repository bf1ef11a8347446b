import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.charset.StandardCharsets;

/**
 * Plain JDK, no Pulsar: for each broker id read from stdin, print what
 * {@code new URL("http://" + id).getHost()} gives, or "!" when the constructor throws.
 * This is the host older Pulsar releases matched isolation policies against.
 */
public class UrlHost {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String id;
        while ((id = in.readLine()) != null) {
            String out;
            try {
                out = "=" + new URL("http://" + id).getHost();
            } catch (MalformedURLException e) {
                out = "!";
            }
            System.out.println(out);
        }
    }
}
