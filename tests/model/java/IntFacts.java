import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * Plain JDK, no Pulsar: Java int arithmetic as Pulsar's split checks use it. Each stdin line is
 * "mul A B", "add A B C" or "d2i X"; prints the int result widened to long, as
 * BundleSplitterTask assigns `long maxBundleBandwidth = intMbytes * MIBI` and sums
 * `consumerCount + producerCount` (ints).
 */
public class IntFacts {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] p = line.trim().split(" ");
            long out;
            switch (p[0]) {
                case "mul": {
                    int a = Integer.parseInt(p[1]);
                    int b = Integer.parseInt(p[2]);
                    out = a * b;
                    break;
                }
                case "add": {
                    int a = Integer.parseInt(p[1]);
                    int b = Integer.parseInt(p[2]);
                    int c = Integer.parseInt(p[3]);
                    out = a + b + c;
                    break;
                }
                default:
                    out = (int) Double.parseDouble(p[1]);
            }
            System.out.println(out);
        }
    }
}
